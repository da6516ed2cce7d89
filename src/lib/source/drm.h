/* drm.h - AMD and Intel GPUs through the kernel's DRM: cards from sysfs (class/drm/cardN) and
 * their readings, the DRM fdinfo parser, a process's DRM clients and the tree's share. Not public. */
#ifndef RT_DRM_H
#define RT_DRM_H

#include "gpu.h"

/* ---- DRM fdinfo (pure parser) ------------------------------------------------------------- */

#define RT_DRM_MAX_ENGINES 16

typedef struct rt_drm_engine {
    char name[24];
    uint64_t busy_ns;      /* drm-engine-<name> */
    uint64_t capacity;     /* drm-engine-capacity-<name>, 1 when absent */
    uint64_t cycles;       /* drm-cycles-<name> */
    uint64_t total_cycles; /* drm-total-cycles-<name> */
    bool has_ns, has_cycles;
} rt_drm_engine;

typedef struct rt_drm_client {
    char driver[32];
    char pdev[32];      /* PCI address, e.g. 0000:03:00.0; "" when not given */
    uint64_t client_id;
    bool has_client_id;
    rt_drm_engine engines[RT_DRM_MAX_ENGINES];
    size_t nengines;
    uint64_t vram_bytes; /* resident (or total) in VRAM-like regions: vram*, local* */
    bool has_vram;
} rt_drm_client;

/* Parses one /proc/PID/fdinfo/FD of len bytes (not NUL-terminated) into *out. Returns 0 when
 * it is a DRM client (a drm-driver line and a client id), -1 otherwise (*out then partial). */
int rt_drm_fdinfo_parse(const char *buf, size_t len, rt_drm_client *out);

/* ---- the cards ------------------------------------------------------------------------------- */

typedef struct rt_drm rt_drm;

/* Finds the amdgpu, i915 and xe cards under the sys root's class/drm (cardN, in number order;
 * connectors, render nodes and display-only drivers left out) and opens their attribute
 * files. Returns a handle, with no cards when there are none or no sys root; NULL only when
 * out of memory. roots is borrowed and must outlive it. Free with rt_drm_close. */
rt_drm *rt_drm_open(const rt_roots *roots);

/* The number of cards found. */
size_t rt_drm_count(const rt_drm *d);

/* Fills o for card i (i < rt_drm_count): static facts (borrowed from d) and the readings the
 * card's files give (busy percent, VRAM, hwmon temperature, power and frequency, and the
 * energy counter for rt_drm_energy); null where a file is missing (the throttled seconds
 * always: the kernel does not count them). */
void rt_drm_read(rt_drm *d, size_t i, rt_gpu *o);

/* The energy of card i as of the last rt_drm_read of it: returns 1 and sets *joules to
 * the running total since its first reading (0 there) of its hwmon energy1_input (uJ; i915
 * and xe have it, amdgpu rarely; a counter that goes backwards was reset and counts again
 * from 0); returns 0 when the card has no such file, that reading failed, or d is NULL. */
int rt_drm_energy(const rt_drm *d, size_t i, double *joules);

/* Calls fn for each DRM client among pid's open files (an fd on /dev/dri whose fdinfo parses).
 * Returns the number of clients, or -errno when pid's fd directory cannot be listed. c is
 * valid only during the call. Allocates nothing. */
long rt_drm_pid_clients(rt_drm *d, int64_t pid, void (*fn)(void *user, const rt_drm_client *c), void *user);

/* Takes the tracked tree's DRM clients (from pids[0..npids), the live processes) at time mono:
 * each card's busiest engine since the previous call, the clients' VRAM (a client reached
 * through several fds counted once) and whether the tree has a client there; read them with
 * rt_drm_tree_card. Clients gone since the previous call are forgotten. Allocates only when
 * more clients are seen than ever before. */
void rt_drm_tree(rt_drm *d, const int64_t *pids, size_t npids, double mono);

/* The last rt_drm_tree's figures for card i: *util_pct (0..100), *vram_bytes, *present. */
void rt_drm_tree_card(const rt_drm *d, size_t i, double *util_pct, uint64_t *vram_bytes, bool *present);

/* Whether the last rt_drm_tree's busy figure of card i covers an interval: some client of the
 * tree there was seen at the call before too (at first sight a client's engines give 0). */
bool rt_drm_tree_card_timed(const rt_drm *d, size_t i);

/* The tree's root (0: none): from the next rt_drm_tree on, the VRAM of the clients reached
 * through its fds is also kept apart, for rt_drm_tree_card_main. */
void rt_drm_set_main(rt_drm *d, int64_t pid);

/* The last rt_drm_tree's VRAM of card i reached through the root's fds. */
uint64_t rt_drm_tree_card_main(const rt_drm *d, size_t i);

/* Closes the cards' files and frees d. NULL is ignored. */
void rt_drm_close(rt_drm *d);

#endif
