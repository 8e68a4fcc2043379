"""The packet simulator's retransmission timer, on cases whose timeouts can be counted by hand.

A timeout must only be counted (and acted on) when the flow has data outstanding and no ACK
advanced since its timer was (re)armed (RFC 6298 §5); a flow waiting for its turn with
nothing in flight has no timer running.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from fabricplan.sim.packet.network import dumbbell, star
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import PacketSpec, packet_spec
from fabrics import custom_flows

MTU = 4096
HEADER = 82
PACKET_BYTES = MTU + HEADER
HOST_GBPS = 100.0
BOTTLENECK_GBPS = 10.0
DELAY_NS = 100.0


def _wire_us(n_bytes: float, gbps: float) -> float:
    return n_bytes * 8 / (gbps * 1e3)


def _spec(fc: str, **changes: object) -> PacketSpec:
    spec = packet_spec(fc, "none", "ecmp", mtu_bytes=MTU, header_bytes=HEADER)  # type: ignore[arg-type]
    return dataclasses.replace(spec, lossless_classes=(1,), **changes)  # type: ignore[arg-type]


def _hand_count(n: int) -> tuple[int, int, int, int]:
    """(timeouts, packets sent, retransmits, drops) of one n-packet flow through a bottleneck
    whose switch holds one packet in transmission and one waiting, derived round by round.

    Round r (r = 0, 1, ...) starts with a burst of every packet from 2r on (at first the
    whole flow, no window; then a timeout's go-back-N). The bottleneck is 10x slower than the
    host link, so the whole burst reaches the switch while its first packet is still on the
    bottleneck: packet 2r is sent, 2r + 1 waits in the buffer, the rest find it full and are
    dropped. The receiver gets 2r and 2r + 1 in order (nothing out of order, so no NACK);
    their ACKs leave nothing new to send, and the lost tail is recovered only by the timer:
    one timeout ends every round but the last.
    """
    rounds = math.ceil(n / 2)
    burst = [n - 2 * r for r in range(rounds)]
    sent = sum(burst)
    drops = sum(max(0, b - 2) for b in burst)
    return rounds - 1, sent, sent - n, drops


@pytest.mark.parametrize("packets", [2, 3, 6, 7])
def test_tail_losses_are_recovered_by_exactly_the_timeouts_counted_by_hand(packets: int) -> None:
    bottleneck_us = _wire_us(PACKET_BYTES, BOTTLENECK_GBPS)
    # The ACKs of a round reach the sender one bottleneck time apart, the second about
    # 2 x bottleneck_us after the round's first send: an rto between the two fires spuriously
    # unless every ACK that advances restarts the timer.
    rto_us = 1.6 * bottleneck_us
    buffer_bytes = 1.5 * PACKET_BYTES  # one waiting packet fits, two do not (lossy admission)
    net = dumbbell(1, HOST_GBPS, BOTTLENECK_GBPS, DELAY_NS, buffer_bytes)
    spec = _spec("none", rto_us=rto_us, switch_buffer_bytes=buffer_bytes)
    result = simulate_packet(net, custom_flows([0], [1], packets * MTU), spec)

    timeouts, sent, retransmits, drops = _hand_count(packets)
    assert result.status == "done"
    assert result.counters["timeouts"] == timeouts
    assert int(result.timeouts[0]) == timeouts
    assert int(result.sent_packets[0]) == sent
    assert result.counters["retransmits"] == retransmits
    assert result.counters["drops"] == drops
    assert int(result.ooo_discards[0]) == 0  # no NACK: only the timer recovers a lost tail
    assert result.counters["delivered_bytes"] == packets * MTU
    # Every round but the last waits one rto after its last ACK; each round carries at most
    # two packets over the bottleneck (plus a few µs of links and ACKs).
    rounds = timeouts + 1
    finish_us = float(result.finish_us[0])
    assert finish_us > timeouts * rto_us + bottleneck_us * packets
    assert finish_us < timeouts * rto_us + rounds * (2 * bottleneck_us + 2.0)


def test_a_loss_free_run_has_no_timeouts_though_flows_wait_longer_than_rto() -> None:
    # 40 flows share one host link round-robin: each sends a packet, has it acknowledged
    # within about a microsecond, then waits for the 39 others (39 packet times, about 13 µs)
    # with nothing in flight, far longer than the rto. Nothing is lost, so nothing may time out.
    flows, packets = 40, 10
    rto_us = 5.0
    assert (flows - 1) * _wire_us(PACKET_BYTES, HOST_GBPS) > 2 * rto_us
    net = star(2, delay_ns=DELAY_NS)
    traffic = custom_flows([0] * flows, [1] * flows, packets * MTU)
    for fc in ("none", "pfc"):
        result = simulate_packet(net, traffic, _spec(fc, rto_us=rto_us))
        assert result.status == "done"
        assert result.counters["drops"] == 0
        assert result.counters["timeouts"] == 0
        assert result.counters["retransmits"] == 0
        assert (result.sent_packets == packets).all()
        assert result.counters["delivered_bytes"] == flows * packets * MTU
        # The flows did live many rtos: a timer left running while idle would have fired.
        assert result.completion_us > packets * 2 * rto_us
