"""The collector pause used by the dashboard's bulk reads: counted across threads, restored exactly."""

import gc
import threading

from monitor.gcpause import gc_paused


def test_collection_is_off_inside_and_back_on_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_on_threads_re_enable_only_when_the_last_ends():
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen["while_second_still_reads"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"while_second_still_reads": False}
    assert gc.isenabled()


def test_an_exception_inside_still_restores_collection():
    try:
        with gc_paused():
            raise ValueError("query failed")
    except ValueError:
        pass
    assert gc.isenabled()


def test_collection_left_off_by_the_caller_stays_off():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
