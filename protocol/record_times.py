"""A seat's move times in a stored record, two ways (protocol/records.py, docs/RECORDS.md).

Both code the gaps between a seat's moves (ms; the first since the start), exactly:

* varints of the zigzagged gaps (form 1, and form 2 for a seat whose clock stepped back):
  a gap of a second or two takes two bytes, which zlib shrinks a little;
* Rice codes (form 2): a gap `g` with the seat's parameter `k` is `g >> k` zero bits, a one,
  then the low `k` bits of `g`; a gap of ESCAPE_Q or more such units is ESCAPE_Q zeros and
  then the gap in RAW_BITS bits. Human gaps are spread over a factor of ten or so, so this
  is about 12 bits a move, against about 15 for the varints after zlib; the bits are random
  and are kept outside the compressed part.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

#: a quotient at which a gap is written raw instead, and that raw gap's width (139 years in ms)
ESCAPE_Q, RAW_BITS = 24, 42


def gaps(times: Sequence[int]) -> list[int]:
    prev, out = 0, []
    for t in times:
        out.append(t - prev)
        prev = t
    return out


def _zigzag(n: int) -> int:
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n: int) -> int:
    return n >> 1 if not n & 1 else -((n + 1) >> 1)


def pack_deltas(times: Sequence[int]) -> bytes:
    """Times (ms from the start) as varints of the zigzagged gaps: most moves take 2 bytes."""
    out = bytearray()
    for gap in gaps(times):
        n = _zigzag(gap)
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
    return bytes(out)


def unpack_deltas(data: bytes) -> list[int]:
    out: list[int] = []
    prev, n, shift = 0, 0, 0
    for b in data:
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            prev += _unzigzag(n)
            out.append(prev)
            n, shift = 0, 0
    if shift:
        raise ValueError("a truncated time")
    return out


def rice_parameter(values: Sequence[int]) -> int:
    """The `k` that codes these gaps in the fewest bits (near log2 of their mean x ln 2)."""
    if not values:
        return 0
    guess = max(0, int(math.log2(max(1.0, sum(values) / len(values) * math.log(2)))))
    return min(
        range(max(0, guess - 1), guess + 2), key=lambda k: sum(_rice_bits(v, k) for v in values)
    )


def _rice_bits(value: int, k: int) -> int:
    q = value >> k
    return q + 1 + k if q < ESCAPE_Q else ESCAPE_Q + RAW_BITS


def rice_bits(values: Sequence[int], k: int) -> str:
    """Gaps (each >= 0) as a string of '0'/'1'."""
    out = []
    for v in values:
        q = v >> k
        if q < ESCAPE_Q:
            out.append("0" * q + "1" + (format(v & ((1 << k) - 1), f"0{k}b") if k else ""))
        else:
            out.append("0" * ESCAPE_Q + format(v, f"0{RAW_BITS}b"))
    return "".join(out)


def bits_to_bytes(bits: str) -> bytes:
    """Bits, zero-padded on the right to whole bytes."""
    if not bits:
        return b""
    pad = -len(bits) % 8
    return int(bits + "0" * pad, 2).to_bytes((len(bits) + pad) // 8, "big")


def bytes_to_bits(data: bytes) -> str:
    return format(int.from_bytes(data, "big"), f"0{len(data) * 8}b") if data else ""


class RiceReader:
    """Reads Rice-coded gaps, seat after seat, from one bit string."""

    def __init__(self, bits: str) -> None:
        self.bits = bits
        self.at = 0

    def times(self, count: int, k: int) -> list[int]:
        """`count` gaps coded with `k`, as times from the start."""
        return list(_running(self._gap(k) for _ in range(count)))

    def _gap(self, k: int) -> int:
        bits, at = self.bits, self.at
        one = bits.find("1", at, at + ESCAPE_Q)
        if one < 0:
            end = at + ESCAPE_Q + RAW_BITS
            if end > len(bits):
                raise ValueError("a truncated time")
            self.at = end
            return int(bits[at + ESCAPE_Q : end], 2)
        end = one + 1 + k
        if end > len(bits):
            raise ValueError("a truncated time")
        self.at = end
        return ((one - at) << k) | (int(bits[one + 1 : end], 2) if k else 0)


def _running(values: Iterator[int]) -> Iterator[int]:
    total = 0
    for v in values:
        total += v
        yield total
