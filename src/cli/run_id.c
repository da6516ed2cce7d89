/* run_id.c - a tracking run's own id (cli.h: cli_run_uuid), made once at its start: 128 bits of
 * getrandom(2) as 32 lowercase hex digits. The history stores it (run_uuid, unique), so that a
 * row written twice (a kept row delivered again, a write whose COMMIT's answer was lost) is one
 * row. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli.h"

void cli_run_uuid(char out[33])
{
    uint64_t r[2] = {0, 0};
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) { /* no entropy yet: the clocks, the pid */
        r[0] = (uint64_t)(cli_real_secs() * 1e9) ^ ((uint64_t)getpid() << 40);
        r[1] = (uint64_t)(cli_mono_secs() * 1e9) ^ (uint64_t)getppid() ^ (uintptr_t)&r;
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)r[0], (unsigned long long)r[1]);
}
