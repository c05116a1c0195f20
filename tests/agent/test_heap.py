"""The heap freeze that keeps full collections off the probes' loop (monitor.agent.heap)."""

import asyncio
import gc
import weakref

import pytest

from monitor.agent.heap import HeapFreezer, round_s


@pytest.fixture(autouse=True)
def thawed():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process must not keep the suite's garbage frozen


def test_settle_freezes_now_and_again_after_one_round():
    async def scenario():
        heap = HeapFreezer()
        heap.settle(round_s([]) / 60)  # one round = 1 s here
        frozen_at_start = gc.get_freeze_count()
        grown = [[object()] for _ in range(5000)]  # what the first round adds: lanes, estimates, series
        await asyncio.sleep(1.3)
        # Frozen objects leave gc's generations: none of what the round added may be in one. (Not a
        # count: frozen objects that die meanwhile lower gc.get_freeze_count(), which made a
        # before + 5,000 comparison fail by one in a busy test process.)
        in_generations = {id(o) for o in gc.get_objects()}
        heap.close()
        return frozen_at_start, in_generations, grown

    frozen_at_start, in_generations, grown = asyncio.run(scenario())
    assert frozen_at_start > 1000
    assert not any(id(lane) in in_generations for lane in grown)


def test_a_full_collection_no_longer_walks_the_frozen_heap():
    async def scenario():
        heap = HeapFreezer()
        heap.settle(600)
        heap.close()
        gc.collect()
        return gc.get_freeze_count(), len(gc.get_objects(generation=2))

    frozen, walked = asyncio.run(scenario())
    assert walked < frozen / 10  # what a full collection still walks is a sliver of what is alive


def test_reshape_thaws_so_replaced_targets_state_can_be_collected():
    class Node:
        pass

    async def scenario():
        heap = HeapFreezer()
        cycle = Node()
        cycle.me = cycle  # the old config's state: a reference cycle
        heap.settle(600)
        ref = weakref.ref(cycle)
        del cycle
        gc.collect()
        alive_while_frozen = ref() is not None
        heap.reshape(600)  # a reload replaced the targets
        heap.close()
        return alive_while_frozen, ref() is None

    alive_while_frozen, collected_after_reshape = asyncio.run(scenario())
    assert alive_while_frozen  # frozen: the collector never looked at it
    assert collected_after_reshape


def test_left_off_it_touches_nothing():
    heap = HeapFreezer(enabled=False)
    heap.settle(60)
    heap.reshape(60)
    assert gc.get_freeze_count() == 0


def test_one_round_is_the_longest_interval():
    class T:
        def __init__(self, s):
            self.interval_s = s

    assert round_s([T(60), T(300), T(30)]) == 300
    assert round_s([]) == 60
