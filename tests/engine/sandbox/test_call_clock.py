"""What a sandbox call is charged (autograder.sandbox.call_clock), with a keeper
stand-in that counts how often it is asked: with a cgroup's count of every process
the box ran (``whole``), and without one (only the live processes are seen)."""
import time

import pytest

from autograder.sandbox.call_clock import POLL_S, TICK_S, CallClock, Mark


class CountingKeeper:
    """A box whose keeper reports ``cpu`` seconds, whether one of its processes is
    ``running``, whether that count is ``whole`` and how many ``others`` are alive."""

    def __init__(self, cpu=1.0, running=False, whole=True, others=0):
        self.cpu, self.running, self.whole, self.others, self.asked = cpu, running, whole, others, 0

    def usage(self):
        self.asked += 1
        return self.cpu, self.running, self.whole, self.others


def _counted(seconds_ago, cpu=1.0, prepaid=0.0):
    """The mark a previous call left, its count taken ``seconds_ago``."""
    return Mark(cpu, time.monotonic() - seconds_ago, prepaid)


def test_a_call_answered_within_a_tick_is_charged_its_wall_time_unasked():
    keeper = CountingKeeper()
    clock = CallClock(keeper, since=_counted(0.0))
    charged = clock.finish()
    assert keeper.asked == 0
    assert 0 <= charged < TICK_S
    mark = clock.mark()  # the count stays where it was; the call's wall time is kept as paid
    assert mark.cpu == keeper.cpu and mark.prepaid == pytest.approx(charged)


def test_a_longer_call_is_charged_the_box_cpu_time():
    keeper = CountingKeeper(cpu=1.0)
    clock = CallClock(keeper, since=_counted(0.0))
    keeper.cpu, keeper.running = 1.3, True
    time.sleep(2 * TICK_S)
    assert clock.finish() == pytest.approx(0.3)
    assert keeper.asked == 1


def test_a_sleeping_call_is_charged_its_wall_time():
    keeper = CountingKeeper(cpu=1.0)
    clock = CallClock(keeper, since=_counted(0.0))
    time.sleep(3 * TICK_S)
    assert clock.finish() >= 3 * TICK_S
    assert keeper.asked == 1


def test_background_cpu_after_quick_calls_is_charged_to_the_next_count_less_what_they_paid():
    """A thread or a process left burning after quick calls: its CPU time is not lost."""
    keeper = CountingKeeper(cpu=1.0)
    quick = CallClock(keeper, since=_counted(0.0))
    paid = quick.finish()
    keeper.cpu = 1.5  # burnt between the calls, by processes that may have ended since
    later = CallClock(keeper, since=quick.mark())
    time.sleep(2 * TICK_S)
    assert later.finish() == pytest.approx(0.5 - paid)


def test_a_call_long_after_the_last_count_counts_first_and_is_charged_the_background():
    keeper = CountingKeeper(cpu=3.0)
    clock = CallClock(keeper, since=_counted(2 * POLL_S, cpu=1.0))
    assert keeper.asked == 1 and clock.charged == pytest.approx(2.0)
    idle = CallClock(CountingKeeper(cpu=1.0), since=_counted(2 * POLL_S, cpu=1.0))
    assert idle.charged == 0  # a box asleep between calls owes nothing


def test_a_box_that_looks_busy_is_still_charged_all_its_cpu():
    """The count is the box's whole CPU time: a process runnable at every count does not
    hide what the processes that ended meanwhile spent."""
    keeper = CountingKeeper(cpu=1.0, running=True)
    clock = CallClock(keeper, since=_counted(0.0))
    keeper.cpu = 1.8
    time.sleep(2 * TICK_S)
    assert clock.update() == pytest.approx(0.8)


def test_without_a_cgroup_a_call_is_charged_its_wall_time_however_busy_it_looks():
    """Only the live processes are counted: a chain of short-lived processes the
    kernel reaps shows a runnable box that spent almost nothing."""
    keeper = CountingKeeper(cpu=1.0, running=True, whole=False, others=1)
    clock = CallClock(keeper, since=_counted(0.0))
    keeper.cpu = 1.001
    time.sleep(3 * TICK_S)
    assert clock.finish() >= 3 * TICK_S


def test_without_a_cgroup_more_cpu_than_wall_is_charged_as_cpu():
    keeper = CountingKeeper(cpu=1.0, whole=False)
    clock = CallClock(keeper, since=_counted(0.0))
    keeper.cpu = 1.5  # several threads on several CPUs
    time.sleep(2 * TICK_S)
    assert clock.finish() == pytest.approx(0.5)


def test_without_a_cgroup_processes_left_behind_are_charged_the_wall_time_since_the_last_count():
    keeper = CountingKeeper(cpu=1.0, whole=False, others=2)
    clock = CallClock(keeper, since=_counted(3.0, prepaid=0.5))
    assert keeper.asked == 1
    assert clock.charged == pytest.approx(2.5, abs=0.1)  # less what the quick calls between paid


def test_without_a_cgroup_a_worker_alone_and_idle_between_calls_owes_nothing():
    clock = CallClock(CountingKeeper(cpu=1.0, whole=False), since=_counted(3.0))
    assert clock.charged == 0


def test_without_a_keeper_the_wall_counts():
    class NoKeeper:
        def usage(self):
            return None

    clock = CallClock(NoKeeper())
    assert not clock.counting and clock.mark() is None
    time.sleep(2 * TICK_S)
    assert clock.finish() >= 2 * TICK_S
