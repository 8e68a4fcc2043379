"""Point to point, as perftest measures it: ``ib_{write,read,send}_{lat,bw}`` tables.

Latency tests (``t_typical``, one QP, one message in flight):

- ``write_lat`` and ``send_lat`` report half the round trip, i.e. the one-way time
  (:func:`~.profile.path_latency_ns`: both adapters, the switch hops, the cables and the message's
  wire bytes at the link rate). Each adapter's catalog latency is its side of the host: the
  sender's CPU writes the doorbell and the work request into the NIC (a posted PCIe write), the
  receiving NIC writes the data into memory (another), each NIC's pipeline in between.
- A message up to perftest's inline size (:data:`PERFTEST_INLINE_BYTES`: 220 B for
  ``write_lat``, 236 B for ``send_lat``) travels inside the work request. A larger one must be
  fetched by the sending NIC from host memory: one PCIe read round trip
  (:data:`PCIE_READ_ROUND_TRIP_NS`) plus the first packet at the slot's rate before it can
  send; the NIC then fetches and transmits packet by packet, so the rest of the message costs
  only what the host side is slower than the wire (:func:`host_fetch_ns`). A message of one
  packet pays its whole fetch before the wire; a multi-packet one is not stored whole.
- ``send_lat`` takes the same path as ``write_lat``: the receive work request is prefetched, and
  the receiver polls a completion entry instead of the buffer's last byte, which the NIC writes
  right after the data.
- ``read_lat`` reports the whole read: a request packet one way, the responder NIC's read of the
  data from its host memory (a PCIe round trip and the payload), the data back.

Bandwidth tests (``BW average``, ``--report_gbits``, one QP, ``tx_depth`` messages in flight):
every message takes ``max(wire_bytes / (link rate * NIC efficiency), size / host goodput,
1 / message_rate)``, the host goodput being what the NIC's PCIe link carries in payload
(:func:`~.profile.host_goodput_gbps`); reads are also limited by the outstanding-read window over
the round trip.

>>> round(P2P_MESSAGE_RATE_MPPS * 1024 * 8 / 1e3, 1)   # 1 KiB writes: message-rate bound, Gb/s
57.3
"""

from __future__ import annotations

from fabricplan.analytic.profile import FabricProfile, path_latency_ns, wire_bytes
from fabricplan.model.results import P2PPoint, P2PTest
from fabricplan.units import BITS_PER_BYTE, message_interval_ns, ns_to_us, serialization_ns

P2P_MESSAGE_RATE_MPPS = 7.0
"""Messages per microsecond one QP posts and completes in ``ib_write_bw`` with GPU memory:
6.9-7.3 Mpps for 2 B-1 KiB on a ConnectX at 100 GbE (NVIDIA GPU Operator documentation,
GPUDirect RDMA example, ``ib_write_bw --use_cuda -q 1``)."""

READ_OUTSTANDING = 16
"""RDMA reads one QP keeps in flight (``max_rd_atomic``; perftest prints ``Outstand reads: 16``
on ConnectX adapters)."""

PERFTEST_INLINE_BYTES: dict[str, int] = {"write_lat": 220, "send_lat": 236}
"""Largest message perftest sends inline in its latency tests on ConnectX (``DEF_INLINE_WRITE``
220, ``DEF_INLINE_SEND_RC_UC_XRC`` 236, ``src/perftest_parameters.h``, linux-rdma/perftest
@00b55b6; ``ctx_set_max_inline``). GPU memory (``--use_cuda``) disables inline."""

PCIE_READ_ROUND_TRIP_NS = 500.0
"""A NIC's DMA read of host memory: the read request up the PCIe link, the root complex's access
to the cache or memory, the completion back (estimate: a PCIe read is a non-posted round trip;
pcie-bench, Neugebauer et al., "Understanding PCIe performance for end host networking",
SIGCOMM 2018, characterises small DMA reads on Xeon hosts at several hundred ns; 500 ns is
taken, not a re-read figure). The adapter latencies in the catalog hold half of it per side (a
posted write crosses the link once)."""

P2P_TESTS: tuple[P2PTest, ...] = (
    "write_lat",
    "read_lat",
    "send_lat",
    "write_bw",
    "read_bw",
    "send_bw",
)

_REQUEST_BYTES = 0.0
"""An RDMA read request carries no payload: one header-only packet."""


def one_way_ns(profile: FabricProfile, switch_hops: int, size_bytes: float) -> float:
    """``ib_write_lat``'s ``t_typical``: the one-way time of one message, ns."""
    return path_latency_ns(profile, switch_hops, size_bytes)


def host_fetch_ns(profile: FabricProfile, size_bytes: float) -> float:
    """What a NIC's DMA read of ``size_bytes`` from its host adds to the one-way time, ns: one
    PCIe round trip and the first packet at the host interface's payload rate
    (:func:`~.profile.host_goodput_gbps`); the NIC fetches the later packets while it sends the
    earlier ones, so they add only what the host side is slower than the wire.

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 16}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> round(host_fetch_ns(profile, 4096), 1)   # 500 + 4096 B at PCIe Gen5 x16's payload rate
    571.1
    >>> round(host_fetch_ns(profile, 2**20), 1)  # later packets hide behind the 400G wire
    571.1
    """
    if profile.host_goodput_gbps is None:
        return PCIE_READ_ROUND_TRIP_NS
    first = min(size_bytes, float(profile.mtu_bytes))
    rest = size_bytes - first
    host_rest = serialization_ns(rest, profile.host_goodput_gbps)
    wire_rest = serialization_ns(
        wire_bytes(size_bytes, profile.mtu_bytes, profile.header_bytes)
        - wire_bytes(first, profile.mtu_bytes, profile.header_bytes),
        profile.link_speed_gbps,
    )
    return (
        PCIE_READ_ROUND_TRIP_NS
        + serialization_ns(first, profile.host_goodput_gbps)
        + max(0.0, host_rest - wire_rest)
    )


def send_ns(profile: FabricProfile, test: P2PTest, switch_hops: int, size_bytes: float) -> float:
    """``ib_write_lat`` / ``ib_send_lat``: the one-way time, with the sender NIC's fetch of the
    payload when it is above the inline size, ns."""
    latency = path_latency_ns(profile, switch_hops, size_bytes)
    if size_bytes > PERFTEST_INLINE_BYTES[test]:
        latency += host_fetch_ns(profile, size_bytes)
    return latency


def read_ns(profile: FabricProfile, switch_hops: int, size_bytes: float) -> float:
    """``ib_read_lat``: a request one way, the responder's fetch of the data, the data back, ns."""
    return (
        path_latency_ns(profile, switch_hops, _REQUEST_BYTES)
        + host_fetch_ns(profile, size_bytes)
        + path_latency_ns(profile, switch_hops, size_bytes)
    )


def _message_ns(profile: FabricProfile, size_bytes: float) -> float:
    """Time between two back-to-back messages of one QP on an otherwise idle path: the wire, the
    host interface (PCIe) and the message rate each bound it."""
    wire = serialization_ns(
        wire_bytes(size_bytes, profile.mtu_bytes, profile.header_bytes),
        profile.link_speed_gbps * profile.nic_bw_efficiency,
    )
    host = 0.0
    if profile.host_goodput_gbps is not None:
        host = serialization_ns(size_bytes, profile.host_goodput_gbps)
    return max(wire, host, message_interval_ns(P2P_MESSAGE_RATE_MPPS))


def p2p_point(profile: FabricProfile, test: P2PTest, size_bytes: int, switch_hops: int) -> P2PPoint:
    """One perftest row.

    Parameters
    ----------
    profile
        The fabric.
    test
        ``write_lat``, ``read_lat``, ``send_lat``, ``write_bw``, ``read_bw`` or ``send_bw``.
    size_bytes
        Message size.
    switch_hops
        Switches between the two hosts.

    Returns
    -------
    P2PPoint
        ``latency_us`` (the latency test's figure, or the time per message in a bandwidth test) and
        ``bw_gbps`` (Gb/s, as ``--report_gbits``).

    Examples
    --------
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "roce_v2"))
    >>> round(p2p_point(profile, "write_bw", 2**20, 1).bw_gbps, 1)  # 400G x 4096 / (4096 + 82)
    392.1
    """
    if test.endswith("_lat"):
        if test == "read_lat":
            latency_ns = read_ns(profile, switch_hops, size_bytes)
        else:
            latency_ns = send_ns(profile, test, switch_hops, size_bytes)
        return P2PPoint(
            test=test,
            size_bytes=size_bytes,
            latency_us=ns_to_us(latency_ns),
            bw_gbps=size_bytes * BITS_PER_BYTE / latency_ns,
        )
    per_message_ns = _message_ns(profile, size_bytes)
    if test == "read_bw":
        per_message_ns = max(
            per_message_ns, read_ns(profile, switch_hops, size_bytes) / READ_OUTSTANDING
        )
    return P2PPoint(
        test=test,
        size_bytes=size_bytes,
        latency_us=ns_to_us(per_message_ns),
        bw_gbps=size_bytes * BITS_PER_BYTE / per_message_ns,
    )


def p2p_points(
    profile: FabricProfile, sizes_bytes: tuple[int, ...], switch_hops: int
) -> tuple[P2PPoint, ...]:
    """Every perftest table (:data:`P2P_TESTS`) over ``sizes_bytes``."""
    return tuple(
        p2p_point(profile, test, size, switch_hops) for test in P2P_TESTS for size in sizes_bytes
    )
