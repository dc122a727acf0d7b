"""common/cpu_share.py: niced neighbours do not take a build's cores; steady ordinary load does."""

from builder_pipelines.common.cpu_share import busy_cores


def _times(user=0, nice=0, system=0, idle=0):
    return [user, nice, system, idle, 0, 0, 0, 0]


def _run(delta, load, own_nice=0, cpus=2):
    samples = iter([_times(), delta])
    return busy_cores(
        cpus, read=lambda: next(samples), sleep=lambda _s: None, loadavg=lambda: (load, 0, 0), own_nice=own_nice
    )


def test_a_niced_neighbour_keeping_both_cores_busy_leaves_them_to_the_build():
    # Two nice-19 processes: load average 2, all the CPU time in the nice column.
    assert _run(_times(nice=200), load=2.0) == 0


def test_an_ordinary_neighbour_keeps_its_core():
    assert _run(_times(user=100, idle=100), load=1.0) == 1


def test_a_niced_build_competes_with_niced_neighbours():
    assert _run(_times(nice=200), load=2.0, own_nice=19) == 2


def test_a_momentary_dip_does_not_hand_out_cores_a_steady_load_uses():
    # Idle for the sample window, but two runnable processes over the last minute: still two busy cores.
    assert _run(_times(idle=200), load=2.0) == 2


def test_a_mix_counts_only_the_ordinary_part():
    assert _run(_times(user=100, nice=100), load=2.0) == 1


def test_without_proc_stat_the_load_average_decides():
    assert busy_cores(2, read=lambda: None, sleep=lambda _s: None, loadavg=lambda: (1.7, 0, 0)) == 1
