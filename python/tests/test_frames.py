"""MetricsCache (_frames.py) against a stand-in for the C store whose oldest block is dropped
in the middle of a read (as a full store drops one every 4,096 samples): the frames come
out whole, every column as long as the timestamps and each row one sample."""
from resource_tracker import _frames
from resource_tracker._native import column

BLOCK = 4


class DroppingStore:
    """rt_tracker_count/first/column over samples 0..count-1, where column c of sample i is
    i + c / 100 (process_alive 1); a block is dropped (and one sample added) on the read
    number drop_at of rt_tracker_column."""

    def __init__(self, count, drop_at):
        self.count, self.first, self.reads, self.drop_at = count, 0, 0, drop_at

    def rt_tracker_count(self, handle):
        return self.count

    def rt_tracker_first(self, handle):
        return self.first

    def rt_tracker_column(self, handle, col, first, n, buf):
        self.reads += 1
        if self.reads == self.drop_at:
            self.first += BLOCK
            self.count += 1
        if first < self.first or first >= self.count:
            return 0
        got = min(n, self.count - first)
        for k in range(got):
            buf[k] = 1.0 if col == column("process_alive") else (first + k) + col / 100
        return got


def test_a_block_dropped_during_a_read_leaves_whole_frames(monkeypatch):
    for drop_at in (1, 3, len(_frames.SYSTEM_COLUMNS) + 1, len(_frames.SYSTEM_COLUMNS) + 5):
        store = DroppingStore(count=10, drop_at=drop_at)
        monkeypatch.setattr(_frames, "lib", store)
        cache = _frames.MetricsCache(children=True)
        cache.update(None)
        assert cache.first == store.first == BLOCK, drop_at
        for frame in (cache.system, cache.process):
            lengths = {name: len(values) for name, values in frame.items()}
            assert set(lengths.values()) == {store.count - BLOCK}, (drop_at, lengths)
        # each row is one sample: the timestamp column's and utime's figures agree
        ts = cache.system["timestamp"]
        assert ts[0] == round(BLOCK + column("timestamp") / 100, 3)
        assert [round(u - column("cpu_utime") / 100) for u in cache.system["utime"]] == \
            [round(t) for t in ts], drop_at
        assert cache.process["pid"] == [float(round(i + column("process_pid") / 100))
                                        for i in range(BLOCK, store.count)]
