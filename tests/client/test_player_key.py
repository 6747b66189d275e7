"""The Python client's player key: made once, kept in the config directory, sent in hello."""

from __future__ import annotations

from solrace.client import Client
from solrace.client.player_key import default_path, load_or_create
from solrace.server.league.players import key_hash, player_id


def test_the_key_is_made_once_and_kept_owner_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = default_path()
    assert path == tmp_path / "solrace" / "player-key"
    key = load_or_create()
    assert len(key) == 43 and path.read_text().strip() == key
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create() == key  # kept, not made again
    assert load_or_create(tmp_path / "other") != key


async def test_hello_with_the_key_gets_its_player_id(server_url, tmp_path) -> None:
    key = load_or_create(tmp_path / "key")
    ids = []
    for player_key in (key, key, None):
        client = Client(server_url, player_key=player_key)
        ids.append((await client.connect()).player)
        await client.close()
    assert ids == [player_id(key_hash(key)), player_id(key_hash(key)), None]
