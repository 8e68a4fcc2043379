"""How NCCL pipelines a buffer: channels, chunks and the time a collective really takes.

NCCL's tuner (``src/graph/tuning.cc``) rates every (algorithm, protocol) with one alpha-beta line,
``latency + size / bandwidth``, and picks the lowest. The kernels do something more detailed
(``src/enqueue.cc``, ``src/include/device.h``, ``src/include/collectives.h``):

- the buffer is split over ``nc`` channels (one thread block each); NCCL uses fewer channels for
  small buffers, about one per ``threads x threshold`` bytes (``topoGetAlgoInfo``), and a channel
  moves at most its share of the algorithm's bandwidth;
- each channel's data moves in pieces (a Simple *slice*, an LL or LL128 *step*, a tree's LL128
  chunk, which NCCL shrinks for deep trees) through the algorithm's stages: the ``2(n-1)`` steps
  of a ring all-reduce, the hops up and down a tree. A connection has :data:`NCCL_STEPS` buffer
  slots, so a stage keeps only that many steps in flight;
- a Simple stage forwards a piece only once it holds all of it (store and forward: the receiver
  waits for the sender's tail pointer), and so does a network send of any protocol (NCCL's proxy
  posts a step once all of it is written, ``src/transport/net.cc``). LL and LL128 lines carry their
  own flags, so across NVLink a stage passes each line on as soon as it arrives: the piece moves
  one *trip* of the channel's threads at a time (``src/device/prims_ll.h``, ``prims_ll128.h``).
  Each thread forwards its own line the moment its flag arrives (``readLL`` then ``storeLL``, no
  barrier between stages), so a run of consecutive line-by-line stages is cut-through: a trip's
  serialisation is paid once per run, and each further stage of the run adds only its step
  latency (:attr:`PipelineShape.line_runs`).

So the time is the longer of two paths through this pipeline (:func:`pipelined_time_us`):

- the busiest link: ``link_stages x pieces`` pieces, one after another;
- the first piece's journey through every stage (each stage's latency, plus the whole piece at
  a storing stage or one trip at a line-by-line stage) followed by the remaining pieces, one per
  period.

For a tiny buffer (one small piece) this is the step latencies: today's latency term. For a huge
buffer (many pieces) it is the link's work, ``size / bandwidth``, with the step latencies hidden
behind it in a ring. In between a tree pays its storing hops for the whole piece (``hops x piece
/ channel bandwidth``), which is why trees fall short of their alpha-beta line at mid sizes (what
NCCL's tuner's ``treeCorrectionFactor`` table allows for).

>>> shape = PipelineShape(stages=22, link_stages=1, stream_share=1.0, piece_max_bytes=32768,
...                       channel_min_bytes=4096, max_channels=16)
>>> channels_for(1024, shape), channels_for(65536, shape), channels_for(2**30, shape)
(1, 16, 16)
>>> round(pipelined_time_us(8, 54.0, 6.8, 18.7, shape), 2)   # tiny: the latency
54.15
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.units import transfer_time_us

NCCL_STEPS = 8
"""Buffer slots of one connection (``NCCL_STEPS``, ``src/include/device.h``)."""

NCCL_SIMPLE_BUFFER_BYTES = 4 * 2**20
"""Simple protocol buffer per connection (``DEFAULT_BUFFSIZE``, 4 MiB, ``src/init.cc``)."""
NCCL_LL_BUFFER_BYTES = 8 * 512 * NCCL_STEPS * 16
"""LL buffer: 8 lines per thread x 512 threads x :data:`NCCL_STEPS` x a 16-byte line
(``DEFAULT_LL_BUFFSIZE``, ``src/init.cc``; ``NCCL_LL_LINES_PER_THREAD``,
``NCCL_LL_MAX_NTHREADS``)."""
NCCL_LL128_BUFFER_BYTES = 120 * 640 * NCCL_STEPS * 8
"""LL128 buffer: 120 8-byte elements per thread x 640 threads x :data:`NCCL_STEPS`
(``DEFAULT_LL128_BUFFSIZE``; ``NCCL_LL128_ELEMS_PER_THREAD``, ``NCCL_LL128_MAX_NTHREADS``)."""

NCCL_LL_DATA_SHARE = 0.5
"""LL lines carry a 4-byte flag with every 4 data bytes (``calcCollChunking``: chunk / 2)."""
NCCL_LL128_DATA_SHARE = 15.0 / 16.0
"""LL128 lines carry 15 data words of 16 (``NCCL_LL128_DATAELEMS / NCCL_LL128_LINEELEMS``)."""

NCCL_LL_LINE_DATA_BYTES = 8
"""Data bytes of one 16-byte LL line, two 4-byte words each with its flag (``union
ncclLLFifoLine``, ``src/include/device.h``); an LL thread moves one line per trip
(``eltPerTrip = nthreads x EltPerLine``, ``src/device/prims_ll.h``)."""
NCCL_LL128_WORD_BYTES = 8
"""An LL128 element is one ``uint64_t``."""
NCCL_LL128_SHMEM_ELEMS_PER_THREAD = 8
"""8-byte words one LL128 thread moves per trip (``NCCL_LL128_SHMEM_ELEMS_PER_THREAD``,
``src/include/device.h``; one warp moves 32 x 8 words, 15 of every 16 data)."""

TREE_MEAN_TRIP_SHARE = 0.5
"""LL and LL128 trees split a channel's threads between reducing up and broadcasting down (70/30,
``runTreeSplit``, ``src/device/all_reduce.h``); a trip up and a trip down together carry one
channel trip, and a tree has as many NVLink hops down as up: on average a hop passes half a
trip."""

TREE_LL128_CHUNK_RULES: tuple[tuple[float, int], ...] = ((64.0, 131072), (16.0, 32768))
"""A tree's LL128 chunk is halved while a channel would get fewer than ``k x nsteps / ppn``
chunks and the chunk is above the floor, for ``(k, floor bytes)`` in turn, with ``nsteps = 1 +
log2i(nodes) + 0.1 ppn`` (``computeCollChunkInfo``, ``src/enqueue.cc``, NCCL 2.18-2.27): deep
trees get small chunks so that the pipeline fills fast."""
TREE_LL128_STEPS_PER_LOCAL_RANK = 0.1
"""The ``0.1 x ppn`` term of ``nstepsLL128`` (``src/enqueue.cc``)."""

RING_CHUNK_STEPS = NCCL_STEPS // 2
"""Slots one ring chunk takes (``ALLREDUCE_CHUNKSTEPS`` etc., ``src/include/collectives.h``)."""
RING_SLICE_STEPS = NCCL_STEPS // 4
"""Slots one ring slice takes (``ALLREDUCE_SLICESTEPS``): a chunk goes out in two slices, and the
next rank starts on the first slice while the second is in flight."""

NCCL_MAX_THREADS: dict[str, int] = {"LL": 512, "LL128": 640, "Simple": 512}
"""Threads per channel (``NCCL_LL_MAX_NTHREADS``, ``NCCL_LL128_MAX_NTHREADS``,
``NCCL_SIMPLE_MAX_NTHREADS``, ``src/include/device.h``)."""
NCCL_THREAD_THRESHOLD: dict[str, int] = {"LL": 8, "LL128": 8, "Simple": 64}
"""Bytes per thread below which NCCL drops a channel (``NCCL_*_THREAD_THRESHOLD``,
``src/include/comm.h``); rings multiply LL's by the rank count (``tuning.cc``)."""

NCCL_NET_CHANNELS = 16
"""Channels (one SM each) NCCL runs for collectives that cross nodes: "the default number of SMs is
16" (NCCL maintainer, NVIDIA/nccl #1649); ``16 coll channels`` in DGX H100 logs (NVIDIA/nccl
#1244) and 16 tree channels with 4 NICs (NVIDIA/nccl #1357)."""
NCCL_NVLINK_CHANNELS = 24
"""Channels NCCL runs inside one NVLink domain (``Channel 00/24`` on 8 x H100, NVIDIA/nccl
#1705; 24 trees on HGX A100, NVIDIA/nccl-tests #100)."""

COLLNET_CHAIN_CHUNK_BYTES = 256 * 2**10
"""CollNetChain's largest chunk (``calcCollChunking``: ``min(256 KiB, stepSize)``)."""


@dataclass(frozen=True, slots=True)
class PipelineShape:
    """How one algorithm and protocol move a channel's data."""

    stages: int
    """Stages on the critical path (ring steps, tree hops up and down)."""
    link_stages: int
    """Stages that share one link: all of them in a ring (a rank sends at every step), one in a
    chain or tree (each hop is its own link)."""
    stream_share: float
    """Share of a channel's data that crosses every stage (``1/n`` in a ring: one rank's slot)."""
    piece_max_bytes: float
    """Largest piece a stage forwards at once (slice, chunk or step)."""
    channel_min_bytes: float
    """Bytes per channel below which NCCL drops a channel (threads x threshold)."""
    max_channels: int
    """Channels at full size."""
    min_pieces: int = 1
    """Pieces a chunk is cut into at least (a Simple ring chunk goes out in 2 slices)."""
    split_min_bytes: float = 0.0
    """Below this stream size a chunk is not cut (NCCL keeps slices above 1/32 of their size)."""
    slots_per_piece: int = 1
    """Connection slots one piece occupies (``sliceSteps``)."""
    stored_stages: int | None = None
    """Stages that hold a whole piece before passing it on (a Simple stage; a network send of any
    protocol); ``None``: all of them. The others pass it on one trip at a time."""
    trip_bytes: float = math.inf
    """Data a channel's threads move in one trip (LL, LL128): what a line-by-line stage holds."""
    line_runs: int | None = None
    """Runs of consecutive line-by-line stages on the first piece's path: each run pays one
    trip's serialisation, the stages inside it pass lines on as they arrive (cut-through).
    ``None``: every line-by-line stage is its own run."""


def channels_for(size_bytes: float, shape: PipelineShape) -> int:
    """Channels NCCL runs for ``size_bytes``: one fewer while a channel would get less than
    ``channel_min_bytes`` (``topoGetAlgoInfo``, ``src/enqueue.cc``), at least one.

    >>> shape = PipelineShape(4, 4, 0.25, 2**20, 32768, 16)
    >>> channels_for(100_000, shape)
    3
    """
    return _channels(size_bytes, shape.channel_min_bytes, shape.max_channels)


def _channels(size_bytes: float, channel_min_bytes: float, max_channels: int) -> int:
    return max(1, min(max_channels, math.floor(size_bytes / channel_min_bytes)))


def pieces_for(stream_bytes: float, shape: PipelineShape) -> int:
    """Pieces one stream is cut into."""
    pieces = max(1, math.ceil(stream_bytes / shape.piece_max_bytes))
    if stream_bytes >= shape.split_min_bytes:
        pieces = max(pieces, shape.min_pieces)
    return pieces


def pipelined_time_us(
    size_bytes: float,
    latency_us: float,
    base_us: float,
    algbw_GBps: float,  # noqa: N803 - GB/s
    shape: PipelineShape,
    pass_algbw_GBps: float | None = None,  # noqa: N803 - GB/s
    store_algbw_GBps: float | None = None,  # noqa: N803 - GB/s
) -> float:
    """Time of one collective through NCCL's pipeline, us.

    Parameters
    ----------
    size_bytes
        nccl-tests ``size``.
    latency_us
        The algorithm's latency: ``base_us`` plus every stage's step latency.
    base_us
        The fixed part (launch, synchronisation), paid once outside the pipeline.
    algbw_GBps
        The algorithm's bandwidth with all its channels (``size / algbw`` is the link's work).
    shape
        Stages, pieces and channels (:class:`PipelineShape`).
    pass_algbw_GBps
        The bandwidth at which the line-by-line stages move data when it is not ``algbw_GBps``
        (LL across NVLink runs at its one-domain rate, the network stages at its slower
        cross-domain rate).
    store_algbw_GBps
        The bandwidth at which a storing stage moves a piece when it is not ``algbw_GBps``
        (NVLSTree's network hops, when the NVSwitch binds the whole).

    Returns
    -------
    float
        ``base + max(link work, first piece through every stage + the other pieces)``; the first
        piece pays its whole transfer at a storing stage and one trip per run of line-by-line
        stages (:attr:`PipelineShape.line_runs`).

    Examples
    --------
    >>> ring = PipelineShape(stages=46, link_stages=46, stream_share=1 / 24,
    ...                      piece_max_bytes=2**20, channel_min_bytes=32768, max_channels=16,
    ...                      min_pieces=2, split_min_bytes=65536, slots_per_piece=2)
    >>> size, algbw = 133_169_160, 49.3
    >>> round(pipelined_time_us(size, 231.0, 8.4, algbw, ring) - size / (algbw * 1e3), 1)
    8.4
    """
    channels = channels_for(size_bytes, shape)
    link_us = transfer_time_us(size_bytes, algbw_GBps) * shape.max_channels / channels
    stream_bytes = size_bytes * shape.stream_share / channels
    pieces = pieces_for(stream_bytes, shape)
    piece_us = link_us / (shape.link_stages * pieces)
    # A line-by-line stage forwards each trip of its threads as soon as it holds it.
    trip_us = piece_us * min(1.0, shape.trip_bytes * pieces / stream_bytes)
    if pass_algbw_GBps is not None:
        trip_us *= algbw_GBps / pass_algbw_GBps
    stored = shape.stages if shape.stored_stages is None else shape.stored_stages
    steps_us = max(0.0, latency_us - base_us)
    # A connection recycles a slot one step latency after using it.
    period_us = max(piece_us, steps_us / shape.stages * shape.slots_per_piece / NCCL_STEPS)
    busiest_link_us = shape.link_stages * pieces * period_us
    line_stages = shape.stages - stored
    runs = line_stages if shape.line_runs is None else min(line_stages, shape.line_runs)
    store_us = piece_us if store_algbw_GBps is None else piece_us * algbw_GBps / store_algbw_GBps
    journey_us = stored * store_us + runs * trip_us
    first_piece_us = steps_us + journey_us + (pieces - 1) * period_us
    return base_us + max(busiest_link_us, first_piece_us)


def ring_shape(
    collective: str, ranks: int, protocol: str, max_channels: int, network_steps: int = 0
) -> PipelineShape | None:
    """NCCL's ring for one collective and protocol with ``network_steps`` of its steps crossing
    the network (``NcclTuning.ring_net_steps``); ``None`` for collectives it does not run.

    Simple stores every slice at every step; LL and LL128 only at the steps that cross the network
    and pass the rest on line by line.

    >>> ring_shape("all_reduce", 8, "Simple", 24).stages
    14
    >>> ring_shape("all_reduce", 16, "LL", 16, network_steps=2).stored_stages
    2
    """
    if collective == "all_reduce":
        stages, link_stages, share = 2 * (ranks - 1), 2 * (ranks - 1), 1.0 / ranks
    elif collective in ("all_gather", "reduce_scatter"):
        stages, link_stages, share = ranks - 1, ranks - 1, 1.0 / ranks
    elif collective == "broadcast":  # a chain from the root: every link carries the buffer once
        stages, link_stages, share = ranks - 1, 1, 1.0
    else:
        return None
    threshold = NCCL_MAX_THREADS[protocol] * NCCL_THREAD_THRESHOLD[protocol]
    if protocol == "LL":
        threshold *= ranks
    step = _step_data_bytes(protocol)
    if protocol == "Simple" and collective != "broadcast":
        return PipelineShape(
            stages=stages,
            link_stages=link_stages,
            stream_share=share,
            piece_max_bytes=step * RING_SLICE_STEPS,
            channel_min_bytes=threshold,
            max_channels=max_channels,
            min_pieces=RING_CHUNK_STEPS // RING_SLICE_STEPS,
            # genericOp keeps a slice at least 1/32 of its full size
            split_min_bytes=step * RING_SLICE_STEPS / 32 * (RING_CHUNK_STEPS // RING_SLICE_STEPS),
            slots_per_piece=RING_SLICE_STEPS,
        )
    if protocol == "Simple":
        return PipelineShape(stages, link_stages, share, step, threshold, max_channels)
    stored = min(stages, network_steps)
    return PipelineShape(
        stages,
        link_stages,
        share,
        step,
        threshold,
        max_channels,
        stored_stages=stored,
        trip_bytes=_trip_data_bytes(protocol),
        # the network steps split the ring's NVLink steps into at most one run more than them
        line_runs=min(stages - stored, stored + 1),
    )


def tree_levels(domains: int) -> int:
    """Network hops from a leaf to the root of a binary tree over ``domains`` NVLink domains.

    >>> tree_levels(2), tree_levels(16), tree_levels(256)
    (1, 4, 8)
    """
    return math.ceil(math.log2(domains)) if domains > 1 else 0


NCCL_MIN_THREADS = 3 * 32
"""Fewest threads NCCL gives a channel (``nt / WARP_SIZE < 3 ? 3 * WARP_SIZE``,
``topoGetAlgoInfo``, ``src/enqueue.cc`` v2.19-v2.30)."""


def tree_threads(protocol: str, size_bytes: float, channels: int, fixed: int | None) -> int:
    """Threads of one tree channel: ``fixed`` where the release runs every tree with all its
    threads (2.22+, ``NcclTuning.tree_threads``); before, the protocol's count, halved while one
    channel would get less than ``threads x threshold`` bytes and the count is a multiple of 128
    (``topoGetAlgoInfo``, ``src/enqueue.cc`` v2.19-v2.21).

    >>> tree_threads("LL", 1024, 1, None), tree_threads("LL", 8, 1, None)
    (128, 96)
    >>> tree_threads("LL", 1024, 1, 640), tree_threads("LL", 2**20, 16, None)
    (640, 512)
    """
    if fixed is not None:
        return fixed
    threads = NCCL_MAX_THREADS[protocol]
    if protocol == "Simple":
        return threads
    threshold = NCCL_THREAD_THRESHOLD[protocol]
    while channels == 1 and size_bytes < threads * threshold and threads % 128 == 0:
        threads //= 2
    return max(NCCL_MIN_THREADS, threads)


def tree_shape(
    local_ranks: int,
    domains: int,
    protocol: str,
    max_channels: int,
    size_bytes: float,
    fixed_threads: int | None = None,
) -> PipelineShape:
    """NCCL's tree all-reduce: up a chain of ``local_ranks`` GPUs and :func:`tree_levels` network
    hops, then back down, concurrently (``runTreeSplit``, ``src/device/all_reduce.h``); every hop
    a stage, one piece per step (``chunkSteps = 1``).

    Simple stores the piece at every hop; LL and LL128 only at the network hops (the proxy sends
    whole steps) and pass it on line by line across NVLink. LL128's piece is NCCL's chunk for
    this size (:func:`tree_ll128_piece_bytes`). A line-by-line stage holds one trip of the
    channel's threads (:func:`tree_threads`; ``fixed_threads``: ``NcclTuning.tree_threads``).

    >>> shape = tree_shape(8, 16, "LL", 16, 2**20)
    >>> shape.stages, shape.stored_stages, shape.trip_bytes
    (22, 8, 2048.0)
    >>> tree_shape(8, 16, "LL", 16, 2**20, fixed_threads=640).trip_bytes   # 2.22+
    2560.0
    """
    threshold = NCCL_MAX_THREADS[protocol] * NCCL_THREAD_THRESHOLD[protocol]
    levels = tree_levels(domains)
    stages = max(1, 2 * ((local_ranks - 1) + levels))
    piece = _step_data_bytes(protocol)
    if protocol == "Simple":
        return PipelineShape(stages, 1, 1.0, piece, threshold, max_channels)
    channels = _channels(size_bytes, threshold, max_channels)
    if protocol == "LL128":
        piece = tree_ll128_piece_bytes(size_bytes, channels, domains, local_ranks)
    threads = tree_threads(protocol, size_bytes / channels, channels, fixed_threads)
    return PipelineShape(
        stages,
        1,
        1.0,
        piece,
        threshold,
        max_channels,
        stored_stages=2 * levels,
        trip_bytes=_trip_data_bytes(protocol, threads) * TREE_MEAN_TRIP_SHARE,
        # the chain up to the domain's head and the chain back down; the network hops between
        line_runs=2 if local_ranks > 1 else 0,
    )


def tree_ll128_piece_bytes(
    size_bytes: float, channels: int, domains: int, local_ranks: int
) -> float:
    """A tree's LL128 chunk: a slot's data (576,000 bytes), halved while each channel would get
    too few chunks for the tree's depth (:data:`TREE_LL128_CHUNK_RULES`).

    >>> tree_ll128_piece_bytes(2**30, 16, 256, 8)           # 64 MiB per channel: a whole slot
    576000.0
    >>> tree_ll128_piece_bytes(16 * 2**20, 16, 256, 8)      # 1 MiB per channel, 8 levels deep
    36000.0
    """
    nodes_log2 = max(1, domains).bit_length() - 1  # log2i: NCCL rounds down
    nsteps = 1 + nodes_log2 + TREE_LL128_STEPS_PER_LOCAL_RANK * local_ranks
    chunk = int(_step_data_bytes("LL128"))
    for chunks_per_step, floor_bytes in TREE_LL128_CHUNK_RULES:
        wanted = nsteps * chunks_per_step / local_ranks
        while int(size_bytes) // (channels * chunk) < wanted and chunk > floor_bytes:
            chunk //= 2
    return float(chunk)


NCCL_NVLS_CHUNK_BYTES = 128 * 2**10
"""NVLS chunk (``NCCL_NVLS_CHUNKSIZE``, 128 KiB, ``src/transport/nvls.cc`` v2.21-v2.30; 2.19-2.20
start from the 512 KiB Simple step instead, not modelled)."""
NCCL_NVLSTREE_DEEP_CHUNK_BYTES = 64 * 2**10
"""NVLSTree's largest chunk from four nodes on (``NCCL_NVLSTREE_MAX_CHUNKSIZE`` default:
``nNodes >= 4 ? 65536 : chunkSize``, ``src/enqueue.cc`` / ``nvls.cc`` v2.19-v2.30)."""
NVLSTREE_CHUNK_RULES: tuple[tuple[int, int], ...] = (
    (32, 262144),
    (16, 131072),
    (4, 65536),
    (1, 32768),
)
"""NVLSTree's chunk shrinks to ``floor`` bytes when the buffer is below ``k x concurrent ops x
chunk``, for ``(k, floor)`` in turn; concurrent ops = NVLS channels x heads
(``computeColl`` / ``calcCollChunking``, ``src/enqueue.cc`` v2.19-v2.30)."""
NCCL_NVLS_CHANNELS: dict[str, int] = {"hopper": 16, "blackwell": 32}
"""NVLS channels across nodes (``NVLS_NCHANNELS_SM90`` 16, ``NVLS_NCHANNELS_SM100`` 32,
``src/transport/nvls.cc`` v2.26-v2.30; 2.30's extra Blackwell NVLSTree tuning is not modelled); a
GPU of another class takes Hopper's."""


def nvlstree_chunk_bytes(size_bytes: float, domains: int, concurrent_ops: int) -> int:
    """NVLSTree's chunk for ``size_bytes`` over ``domains`` NVLink domains with
    ``concurrent_ops`` (NVLS channels x heads) in flight (:data:`NVLSTREE_CHUNK_RULES`).

    >>> nvlstree_chunk_bytes(2**30, 2, 128), nvlstree_chunk_bytes(2**20, 2, 128)
    (131072, 32768)
    >>> nvlstree_chunk_bytes(2**30, 4, 128)        # four nodes and more: at most 64 KiB
    65536
    """
    chunk = NCCL_NVLS_CHUNK_BYTES
    if domains >= 4:
        chunk = min(chunk, NCCL_NVLSTREE_DEEP_CHUNK_BYTES)
    for times, floor in NVLSTREE_CHUNK_RULES:
        if size_bytes < times * concurrent_ops * chunk and chunk > floor:
            chunk = floor
    return chunk


def nvlstree_shape(
    size_bytes: float, domains: int, heads: int, nvls_channels: int
) -> PipelineShape:
    """NVLSTree (``runNvlsTree``, ``src/device/all_reduce.h``): every chunk is reduced through
    the NVSwitch to its head, goes up and down the tree of domains over the network, and is
    multicast back through the NVSwitch; ``nvls_channels x heads`` chunks are in flight, each
    on its own head's link. The network hops store a whole chunk (Simple); the two NVSwitch
    stages stream it at the NVLS rate (``pass_algbw_GBps`` of the candidate): line-by-line
    stages whose trip is the whole chunk. A network hop moves its chunk at the head's link rate
    (``store_algbw_GBps``), the NVSwitch stages at the NVLS rate; the slower of the two bounds
    the whole (the candidate's algorithm bandwidth).

    >>> shape = nvlstree_shape(8 * 2**20, 4, 8, 16)
    >>> shape.stages, shape.stored_stages, shape.piece_max_bytes, shape.max_channels
    (6, 4, 65536, 128)
    """
    concurrent = max(1, nvls_channels * heads)
    levels = tree_levels(domains)
    chunk = nvlstree_chunk_bytes(size_bytes, domains, concurrent)
    return PipelineShape(
        stages=2 + 2 * levels,
        link_stages=1,
        stream_share=1.0,
        piece_max_bytes=chunk,
        channel_min_bytes=1.0,  # NVLS runs all its channels at every size (topoGetAlgoInfo)
        max_channels=concurrent,
        stored_stages=2 * levels,
        trip_bytes=chunk,
        line_runs=2,
    )


def collnet_chain_piece_bytes(size_bytes: float, channels: int, depth: int) -> float:
    """CollNetChain's chunk: 256 KiB, halved while each channel would get too few chunks for the
    chain's ``depth`` (``calcCollChunking``, ``src/enqueue.cc``).

    >>> collnet_chain_piece_bytes(512 * 2**20, 16, 8) / 2**10
    128.0
    """
    chunk = float(COLLNET_CHAIN_CHUNK_BYTES)
    per_channel = size_bytes / channels
    for chunks_per_depth, floor in ((64, 131072), (8, 65536), (1, 32768)):
        while per_channel / chunk < depth * chunks_per_depth and chunk > floor:
            chunk /= 2
    return chunk


def collnet_chain_shape(size_bytes: float, local_ranks: int, max_channels: int) -> PipelineShape:
    """CollNetChain: up the NVLink chain to the node's head, to the switches' reduction tree and
    back (two network stages), then down the chain.

    >>> collnet_chain_shape(8 * 2**30, 8, 16).stages
    16
    """
    threshold = NCCL_MAX_THREADS["Simple"] * NCCL_THREAD_THRESHOLD["Simple"]
    piece = collnet_chain_piece_bytes(size_bytes, max_channels, local_ranks)
    return PipelineShape(2 * (local_ranks - 1) + 2, 1, 1.0, piece, threshold, max_channels)


def _trip_data_bytes(protocol: str, threads: int | None = None) -> int:
    """Data one channel's ``threads`` (default: the protocol's count) move in one trip (LL,
    LL128)."""
    if threads is None:
        threads = NCCL_MAX_THREADS[protocol]
    if protocol == "LL":
        return threads * NCCL_LL_LINE_DATA_BYTES
    words = threads * NCCL_LL128_SHMEM_ELEMS_PER_THREAD
    return int(words * NCCL_LL128_WORD_BYTES * NCCL_LL128_DATA_SHARE)


def _step_data_bytes(protocol: str) -> float:
    """Data bytes one buffer slot carries."""
    if protocol == "LL":
        return NCCL_LL_BUFFER_BYTES / NCCL_STEPS * NCCL_LL_DATA_SHARE
    if protocol == "LL128":
        return NCCL_LL128_BUFFER_BYTES / NCCL_STEPS * NCCL_LL128_DATA_SHARE
    return NCCL_SIMPLE_BUFFER_BYTES / NCCL_STEPS
