import sys

from solrace.cli import main

sys.exit(main())
