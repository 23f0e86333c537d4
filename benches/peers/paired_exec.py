#!/usr/bin/env python3
"""Two (or more) commands timed in pairs, exec to exit: for a before/after of a short command
(`chromate status`) on a shared machine, where only figures taken side by side compare.

    python3 benches/peers/paired_exec.py [--after "CMD"] N "CMD A ..." "CMD B ..." ["CMD C ..."]

Each repetition runs every command once, back to back, the order reversed every other
repetition, so that the load of the moment falls on all alike. A command is split on spaces
(no quoting) and started with posix_spawn, its stdout to /dev/null (stderr kept), then
waited for; the time is exec to reaping, as `cli_side_by_side.mjs` takes it. Prints each
command's median, 10th and 90th percentiles and minimum, in milliseconds. Pass `/bin/true` as
one of the commands to see the machine's floor. `--after CMD` runs CMD, untimed, after each
timed command: `--after "target/release/chromate close --session cold"` with `navigate … --session
cold` commands times a cold first command, each on a session that does not exist yet.
"""

import os
import statistics
import sys
import time


def main() -> None:
    args = sys.argv[1:]
    after = None
    if len(args) >= 2 and args[0] == "--after":
        after = args[1].split()
        args = args[2:]
    if len(args) < 2 or not args[0].isdigit():
        sys.exit(__doc__)
    repetitions = int(args[0])
    commands = [command.split() for command in args[1:]]
    samples: list[list[float]] = [[] for _ in commands]
    devnull = os.open(os.devnull, os.O_WRONLY)
    for repetition in range(repetitions):
        order = list(range(len(commands)))
        if repetition % 2:
            order.reverse()
        for index in order:
            argv = commands[index]
            started = time.perf_counter()
            pid = os.posix_spawn(
                argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)]
            )
            os.waitpid(pid, 0)
            samples[index].append((time.perf_counter() - started) * 1000)
            if after:
                pid = os.posix_spawn(
                    after[0], after, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)]
                )
                os.waitpid(pid, 0)
    for argv, times in zip(commands, samples):
        times.sort()
        print(
            f"{' '.join(argv)}: median {statistics.median(times):.2f} ms, "
            f"p10 {times[len(times) // 10]:.2f}, p90 {times[9 * len(times) // 10]:.2f}, "
            f"min {times[0]:.2f} ({len(times)} runs)"
        )


if __name__ == "__main__":
    main()
