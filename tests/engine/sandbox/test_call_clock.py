"""What a sandbox call is charged (autograder.sandbox.call_clock), with a keeper
stand-in that counts how often it is asked."""
import time

import pytest

from autograder.sandbox.call_clock import TICK_S, CallClock


class CountingKeeper:
    """A box whose keeper reports ``cpu`` seconds (and whether it is running)."""

    def __init__(self, cpu=1.0, running=False):
        self.cpu, self.running, self.asked = cpu, running, 0

    def usage(self):
        self.asked += 1
        return self.cpu, self.running


def test_a_call_answered_within_a_tick_is_charged_its_wall_time_unasked():
    keeper = CountingKeeper()
    clock = CallClock(keeper, since=keeper.cpu)
    charged = clock.finish()
    assert keeper.asked == 0
    assert 0 <= charged < TICK_S
    assert clock.last_cpu == keeper.cpu  # the mark stays: nothing measured


def test_a_longer_call_is_charged_the_box_cpu_time():
    keeper = CountingKeeper(cpu=1.0)
    clock = CallClock(keeper, since=1.0)
    keeper.cpu, keeper.running = 1.3, True
    time.sleep(2 * TICK_S)
    assert clock.finish() == pytest.approx(0.3)
    assert keeper.asked == 1


def test_a_sleeping_call_is_charged_its_wall_time():
    keeper = CountingKeeper(cpu=1.0)
    clock = CallClock(keeper, since=1.0)
    time.sleep(3 * TICK_S)
    assert clock.finish() >= 3 * TICK_S
    assert keeper.asked == 1


def test_background_cpu_after_quick_calls_is_charged_to_the_next_measured_call():
    """A thread left burning after quick calls: its CPU time is not lost."""
    keeper = CountingKeeper(cpu=1.0)
    quick = CallClock(keeper, since=1.0)
    quick.finish()
    keeper.cpu, keeper.running = 1.5, True  # burnt between the calls
    later = CallClock(keeper, since=quick.last_cpu)
    time.sleep(2 * TICK_S)
    assert later.finish() == pytest.approx(0.5)


def test_without_a_keeper_the_wall_counts():
    class NoKeeper:
        def usage(self):
            return None

    clock = CallClock(NoKeeper())
    assert not clock.counting
    time.sleep(2 * TICK_S)
    assert clock.finish() >= 2 * TICK_S
