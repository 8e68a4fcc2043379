"""Unit conversions: the only place where one unit becomes another.

Names carry units everywhere else (``latency_ns``, ``link_speed_gbps``, ``buffer_bytes``). The
packet simulator's clock is integer picoseconds.

Conventions
-----------
- Link speeds are in gigabits per second (Gb/s, 10**9 bit/s), as vendors and perftest
  ``--report_gbits`` print them.
- nccl-tests bandwidths are in GB/s = 10**9 bytes/s.
- Sizes are bytes; ``MiB`` style powers of two are only used when parsing user sizes such as ``8G``
  (nccl-tests treats ``8G`` as 8 * 2**30 bytes).

>>> gbps_to_bytes_per_s(400)
50000000000.0
>>> serialization_ns(4096, 400)
81.92
>>> parse_size("64M")
67108864
"""

from __future__ import annotations

import re

BITS_PER_BYTE = 8
NS_PER_US = 1_000.0
US_PER_MS = 1_000.0
MIB_BYTES = 2**20
NS_PER_S = 1e9
PS_PER_NS = 1_000
PS_PER_S = 10**12
PS_PER_US = 10**6
BPS_PER_MBPS = 1e6
BPS_PER_GBPS = 1e9
W_PER_KW = 1_000.0
HOURS_PER_YEAR = 8_760.0
TB_PER_GB = 1e-3
BYTES_PER_GB_US = 1e3
"""GB/s x µs = 1,000 bytes."""

_SIZE_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def gbps_to_bytes_per_s(speed_gbps: float) -> float:
    """Gigabits per second to bytes per second."""
    return speed_gbps * 1e9 / BITS_PER_BYTE


def bytes_per_s_to_gbps(rate_bytes_per_s: float) -> float:
    """Bytes per second to gigabits per second."""
    return rate_bytes_per_s * BITS_PER_BYTE / 1e9


def gbps_to_GBps(speed_gbps: float) -> float:  # noqa: N802 - GB/s is the nccl-tests unit
    """Gigabits per second to gigabytes (10**9 bytes) per second."""
    return speed_gbps / BITS_PER_BYTE


def GBps_to_gbps(rate_GBps: float) -> float:  # noqa: N802,N803
    """Gigabytes (10**9 bytes) per second to gigabits per second."""
    return rate_GBps * BITS_PER_BYTE


def serialization_ns(size_bytes: float, speed_gbps: float) -> float:
    """Time to put ``size_bytes`` on a wire of ``speed_gbps``, in nanoseconds."""
    return size_bytes * BITS_PER_BYTE / speed_gbps


def mib_per_s_to_gbps(rate_mib_per_s: float) -> float:
    """MiB (2**20 bytes) per second to gigabits per second.

    perftest prints bandwidth in MiB/s (labelled ``MB/sec`` before 2024) unless ``--report_gbits``.

    >>> mib_per_s_to_gbps(1.0)
    0.008388608
    """
    return bytes_per_s_to_gbps(rate_mib_per_s * MIB_BYTES)


def ms_to_us(value_ms: float) -> float:
    """Milliseconds to microseconds."""
    return value_ms * US_PER_MS


def ns_to_us(value_ns: float) -> float:
    """Nanoseconds to microseconds."""
    return value_ns / NS_PER_US


def us_to_ns(value_us: float) -> float:
    """Microseconds to nanoseconds."""
    return value_us * NS_PER_US


def ns_to_s(value_ns: float) -> float:
    """Nanoseconds to seconds."""
    return value_ns / NS_PER_S


def s_to_ns(value_s: float) -> float:
    """Seconds to nanoseconds."""
    return value_s * NS_PER_S


def ns_to_ps(value_ns: float) -> int:
    """Nanoseconds to integer picoseconds (the packet simulator's clock)."""
    return round(value_ns * PS_PER_NS)


def ps_to_ns(value_ps: int) -> float:
    """Integer picoseconds to nanoseconds."""
    return value_ps / PS_PER_NS


def w_to_kw(power_w: float) -> float:
    """Watts to kilowatts."""
    return power_w / W_PER_KW


def energy_kwh_per_year(power_w: float) -> float:
    """Energy drawn in one year by a constant load of ``power_w`` watts, in kWh."""
    return w_to_kw(power_w) * HOURS_PER_YEAR


def gbps_to_tbps(speed_gbps: float) -> float:
    """Gigabits to terabits per second."""
    return speed_gbps / 1_000.0


def parse_size(text: str) -> int:
    """Parse a message size such as ``8``, ``64K``, ``1M``, ``8G`` (powers of two, as nccl-tests).

    Raises ``ValueError`` with the offending text when it is not a size.
    """
    match = _SIZE_RE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (use e.g. 8, 64K, 1M, 8G)")
    number, suffix = match.groups()
    return int(float(number) * _SIZE_SUFFIX[suffix.upper()])


def format_size(size_bytes: int) -> str:
    """Format a size the way nccl-tests flags name it: ``1K``, ``64M``, ``8G``.

    >>> format_size(8 * 2**30)
    '8G'
    >>> format_size(1000)
    '1000'
    """
    for suffix in ("T", "G", "M", "K"):
        unit = _SIZE_SUFFIX[suffix]
        if size_bytes >= unit and size_bytes % unit == 0:
            return f"{size_bytes // unit}{suffix}"
    return str(size_bytes)


MBPS_PER_GBPS = 1_000.0
MS_PER_S = 1_000.0
KIB_BYTES = 2**10


def mbps_to_gbps(speed_mbps: float) -> float:
    """Megabits to gigabits per second (SONiC ``PORT.speed`` and ethtool print Mb/s).

    >>> mbps_to_gbps(400000)
    400.0
    """
    return speed_mbps / MBPS_PER_GBPS


def gbps_to_mbps(speed_gbps: float) -> float:
    """Gigabits to megabits per second."""
    return speed_gbps * MBPS_PER_GBPS


KBPS_PER_GBPS = 1_000_000


def gbps_to_kbps(speed_gbps: float) -> int:
    """Gigabits to whole kilobits per second (NetBox stores interface speed in kb/s).

    >>> gbps_to_kbps(400)
    400000000
    """
    return round(speed_gbps * KBPS_PER_GBPS)


def s_to_ms(value_s: float) -> float:
    """Seconds to milliseconds (EOS prints PFC watchdog timers in seconds).

    >>> s_to_ms(0.2)
    200.0
    """
    return value_s * MS_PER_S


def ms_to_s(value_ms: float) -> float:
    """Milliseconds to seconds."""
    return value_ms / MS_PER_S


def kib_to_bytes(value_kib: float) -> float:
    """KiB (2**10 bytes, the ``KB`` of switch CLIs) to bytes.

    >>> kib_to_bytes(146.48)
    149995.52
    """
    return value_kib * KIB_BYTES


US_PER_S = 1e6
BYTES_PER_US_PER_GBYTE_PER_S = 1e3
"""1 GB/s (10**9 bytes/s, the nccl-tests unit) is 1,000 bytes per microsecond."""
FLOPS_PER_TFLOPS = 1e12


def us_to_s(value_us: float) -> float:
    """Microseconds to seconds.

    >>> us_to_s(250.0)
    0.00025
    """
    return value_us / US_PER_S


def GBps_to_bytes_per_s(rate_GBps: float) -> float:  # noqa: N802,N803 - GB/s as nccl-tests
    """Gigabytes (10**9 bytes) per second to bytes per second."""
    return rate_GBps * 1e9


def GBps_to_bytes_per_us(rate_GBps: float) -> float:  # noqa: N802,N803 - GB/s as nccl-tests
    """Gigabytes (10**9 bytes) per second to bytes per microsecond."""
    return rate_GBps * BYTES_PER_US_PER_GBYTE_PER_S


def GiBps_to_bytes_per_us(rate_GiBps: float) -> float:  # noqa: N802,N803 - GiB/s as NCCL
    """Gibibytes (2**30 bytes) per second to bytes per microsecond (NCCL's symmetric-kernel
    model counts in these: ``GBps = (1<<30)/1.e6``).

    >>> GiBps_to_bytes_per_us(1.0)
    1073.741824
    """
    return rate_GiBps * 2**30 / 1e6


def gbps_to_bytes_per_us(speed_gbps: float) -> float:
    """Gigabits per second to bytes per microsecond.

    >>> gbps_to_bytes_per_us(400)
    50000.0
    """
    return GBps_to_bytes_per_us(gbps_to_GBps(speed_gbps))


def transfer_time_us(size_bytes: float, rate_GBps: float) -> float:  # noqa: N803
    """Time to move ``size_bytes`` at ``rate_GBps`` (10**9 bytes/s), in microseconds.

    >>> transfer_time_us(2**30, 100.0)
    10737.41824
    """
    return size_bytes / GBps_to_bytes_per_us(rate_GBps)


def transfer_rate_GBps(size_bytes: float, time_us: float) -> float:  # noqa: N802
    """The rate that moves ``size_bytes`` in ``time_us``, in GB/s (10**9 bytes/s).

    >>> transfer_rate_GBps(10**9, 10_000.0)
    100.0
    """
    return size_bytes / (time_us * BYTES_PER_US_PER_GBYTE_PER_S)


def message_interval_ns(rate_mpps: float) -> float:
    """Nanoseconds between messages at ``rate_mpps`` million messages per second.

    >>> message_interval_ns(4.0)
    250.0
    """
    return NS_PER_US / rate_mpps


def mpps_to_per_s(rate_mpps: float) -> float:
    """Million messages (or packets) per second to messages per second."""
    return rate_mpps * 1e6


def tflops_to_flops_per_s(rate_tflops: float) -> float:
    """Tera floating-point operations per second to operations per second."""
    return rate_tflops * FLOPS_PER_TFLOPS


def us_to_ps(value_us: float) -> int:
    """Microseconds to whole picoseconds (the packet simulator's clock).

    >>> us_to_ps(1.5)
    1500000
    """
    return round(value_us * PS_PER_US)


def mbps_to_bps(speed_mbps: float) -> float:
    """Megabits per second to bits per second."""
    return speed_mbps * BPS_PER_MBPS


def gbps_to_bps(speed_gbps: float) -> float:
    """Gigabits per second to bits per second."""
    return speed_gbps * BPS_PER_GBPS


def bps_to_gbps(speed_bps: float) -> float:
    """Bits per second to gigabits per second."""
    return speed_bps / BPS_PER_GBPS
