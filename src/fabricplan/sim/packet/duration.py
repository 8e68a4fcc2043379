"""The CPU time a packet-level run will take, estimated from its traffic before it starts.

Each data packet costs about :data:`EVENTS_PER_PACKET_LINK` events on every link of its path
(its arrival and departure at each queue, its share of the acknowledgement and of the sender's
pacing), and the event loop runs about :data:`PACKET_EVENTS_PER_CPU_SECOND` of them a CPU
second. Both are read from ``benchmarks/packet_scale.py`` (docs/performance.md, the growth
tables); the estimate is shown beside the progress bar so that a user knows what a run asks
before the bar has moved, and is good to a factor of about two either way (the measured rate
spans 0.7-2.2 M events per CPU second with the fabric's size and the machine's load).

>>> round(packet_run_seconds(1_000_000, 4), 1)
16.0
"""

from __future__ import annotations

EVENTS_PER_PACKET_LINK = 4.0
"""Events per data packet and link of its path (measured): 16 events a packet on 2-tier fat
trees (4 links host to host) and 25 on 3-tier ones (6 links) in ``packet_scale.py``'s runs
of 8 flows of 64 KiB per host (docs/performance.md), 4.0-4.2 a link; the lower taken."""
PACKET_EVENTS_PER_CPU_SECOND = 1.0e6
"""Events the packet loop runs a CPU second (measured, rounded): 0.69-0.96 M at 1,024-16,384
hosts and 2.2 M at 64 hosts on this project's benchmark machine (docs/performance.md)."""


def path_links(tiers: int) -> int:
    """Links from host to host over a fabric of ``tiers`` switch tiers, up and down.

    >>> [path_links(t) for t in (1, 2, 3)]
    [2, 4, 6]
    """
    return 2 * max(tiers, 1)


def packet_run_seconds(packets: int, links: int) -> float:
    """CPU seconds of one packet-level run of ``packets`` data packets over paths of ``links``
    links (an estimate, see the module)."""
    return packets * links * EVENTS_PER_PACKET_LINK / PACKET_EVENTS_PER_CPU_SECOND


__all__ = [
    "EVENTS_PER_PACKET_LINK",
    "PACKET_EVENTS_PER_CPU_SECOND",
    "packet_run_seconds",
    "path_links",
]
