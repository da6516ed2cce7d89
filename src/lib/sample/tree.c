/* tree.c - the sampler's process-tree part (see tree.h): deltas of the tree's raw totals,
 * clamped so that reported totals never go backwards, with the per-interval CPU held to
 * what the machine's own accounting allows (ticks truncated per process in /proc/PID/stat
 * and wait4's exact microseconds otherwise land in one short interval as impossible cores). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "tree.h"

int rt_tree_part_open(rt_tree_part *p, rt_sample_ctx *c, int64_t root, bool own_children, double pss_max_age_secs,
                      double walk_max_age_secs)
{
    p->root_pid = root;
    p->walk_max_age = walk_max_age_secs;
    p->walk_period = NAN;
    p->wait_ratio = p->demand_span = p->demand = NAN;
    p->walk_threads = 0;
    p->walk_memory_high = RT_NULL_U64;
    long page = sysconf(_SC_PAGESIZE);
    p->pt_span = (page > 0 ? (double)page : 4096.0) / 8.0;
    p->pt_now = RT_NULL_U64;
    p->pt_mark = NAN;
    p->tasks_prev = RT_NULL_I64;
    p->keep_set = RT_PROCTREE_KEEP_MAX;
    p->pss_max_age = p->pss_age_set = pss_max_age_secs;
    p->from_zero = own_children;
    p->tree = rt_proctree_new(&c->roots, root, own_children, &c->log, c->clk_tck, pss_max_age_secs);
    /* the processes born and gone between walks, at their peaks: a command's tree from its start;
     * a running process's (--pid, the embedded tracker's own) from the first walk that finds it
     * a child, so that one that makes none holds no listener (its 64 KiB buffer, the records) */
    if (p->tree && geteuid() == 0 && own_children)
        rt_proctree_count_exits(p->tree);
    p->exits_wanted = p->tree && geteuid() == 0 && !own_children;
    if (p->tree)
        rt_proctree_count_files(p->tree); /* the job's tmpfs and /dev/shm */
    return p->tree ? 0 : -1;
}

/* Whether v moved from mark by share of mark or more (a change from or to nothing counts). */
static bool moved(uint64_t v, uint64_t mark, double share)
{
    if (v == RT_NULL_U64 || mark == RT_NULL_U64)
        return v != mark;
    double d = fabs((double)v - (double)mark);
    return mark == 0 ? d > 0 : d >= share * (double)mark;
}

/* Whether v fell below mark by share of mark or more (both known). */
static bool fell(uint64_t v, uint64_t mark, double share)
{
    return v != RT_NULL_U64 && mark != RT_NULL_U64 && (double)v <= (1.0 - share) * (double)mark && v < mark;
}

/* Whether v rose above high by share of high or more (from no high yet: any value). */
static bool rose(uint64_t v, uint64_t high, double share)
{
    if (v == RT_NULL_U64)
        return false;
    if (high == RT_NULL_U64)
        return true;
    return high == 0 ? v > 0 : (double)v >= (1.0 + share) * (double)high;
}

void rt_tree_part_page_tables(rt_tree_part *p, uint64_t kib)
{
    p->pt_now = kib;
}

/* The page tables' noise floor at mono (KiB; RT_SHARERS_NOISE_HALF). */
static double sharers_noise(const rt_tree_part *p, double mono)
{
    if (!(p->sharers_noise > 0))
        return 0.0;
    double age = mono - p->sharers_noise_mono;
    return age > 0 ? p->sharers_noise * exp2(-age / RT_SHARERS_NOISE_HALF) : p->sharers_noise;
}

/* The page tables' move since the mark (KiB) that the tree's own memory does not explain: the
 * group's anonymous plus shared memory moved since the last walk (k; none without a group)
 * needs at most that move over pt_span of tables of its own, fewer in huge pages or for shmem
 * no one maps (a job that maps and unmaps 300 MiB of its own again and again moves the
 * machine's tables by 600 KiB each time: no outsider's doing). What is left is the least move
 * of others' that the two allow: a move the group's way beyond its need, or all of one the
 * other way. */
static double tables_unexplained(const rt_tree_part *p, const rt_tree_clock *k)
{
    double e = (double)p->pt_now - p->pt_mark;
    if (!k || !k->group || k->memory_bytes == RT_NULL_U64 || p->walk_memory == RT_NULL_U64)
        return fabs(e);
    double own = ((double)k->memory_bytes - (double)p->walk_memory) / 1024.0 / p->pt_span;
    return e * own > 0 ? fmax(0.0, fabs(e) - fabs(own)) : fabs(e);
}

/* Whether this reading re-reads the exposed processes' PSS for sharers outside the tree (see
 * RT_SHARERS_SHARE); pays down the debt. k: the group's clock, or NULL. */
static bool sharers_moved(rt_tree_part *p, const rt_tree_clock *k, double mono)
{
    /* the probe, where there is one: the exact mapcounts of the pages shared, not the tables */
    double probe = p->tree ? rt_proctree_probe_move(p->tree) : -1.0;
    p->sharers_probe = probe >= 0;
    double budget = p->sharers_probe ? RT_SHARERS_PROBE_BUDGET : RT_SHARERS_BUDGET;
    if (p->sharers_mono > 0 && mono > p->sharers_mono)
        p->sharers_debt = fmax(0.0, p->sharers_debt - (mono - p->sharers_mono) * budget);
    p->sharers_mono = mono;
    double burst = fmax(RT_SHARERS_BURST, RT_SHARERS_BURST_READS * p->sharers_cost);
    p->sharers_move = 0.0;
    if (p->sharers_probe && p->have_walk && p->cur.pss_ok && probe >= RT_SHARERS_SHARE * (double)p->cur.pss_kib &&
        p->sharers_debt < burst)
        return true;
    /* the page tables too, with the probe: its pages are read in turns (a move it has not read
     * yet waits up to four samples), and a process of the tree that maps what another one of it
     * holds grows the tables at once (test_parts under load: a child's second mapper seen a walk
     * late, its pages still the first child's private ones) */
    if (p->pt_now == RT_NULL_U64 || isnan(p->pt_mark) || !p->have_walk || !p->cur.pss_ok)
        return false;
    double d = tables_unexplained(p, k);
    p->sharers_move = d;
    double could = fmin(d * p->pt_span, (double)p->cur.exposed_kib); /* KiB of the tree's PSS */
    return could > 0 && could >= RT_SHARERS_SHARE * (double)p->cur.pss_kib && p->sharers_debt < burst &&
           d > RT_SHARERS_NOISE_OVER * sharers_noise(p, mono);
}

/* The walk's own clock (rt_tree_part_walk_due without sharers). */
static bool clock_due(rt_tree_part *p, const rt_tree_clock *k, double mono)
{
    p->walk_period = NAN;
    if (!k || !k->group || !(p->walk_max_age > 0))
        return true; /* no group stands in: every reading walks */
    double cost = p->walk_cost_secs;
    p->walk_period = fmin(cost / RT_WALK_BUDGET, p->walk_max_age);
    double age = mono - p->walk_mono;
    if (!p->have_walk || p->walk_now || age < 0 || age >= p->walk_period)
        return true;
    if (k->pids == 0 && p->walk_pids != 0)
        return true; /* the group emptied: the job's last figures */
    if (rose(k->memory_bytes, p->walk_memory_high, RT_WALK_HIGH_SHARE))
        return true; /* a new high: the peaks feed the answers (PSS, RSS peak), walked at once */
    bool changed = (k->pids != RT_NULL_I64 && k->pids != p->walk_pids) ||
                   moved(k->memory_bytes, p->walk_memory, RT_WALK_MOVED_SHARE);
    return changed && age >= fmin(cost / RT_WALK_MOVED_BUDGET, p->walk_max_age);
}

bool rt_tree_part_walk_due(rt_tree_part *p, const rt_tree_clock *k, double mono)
{
    bool due = clock_due(p, k, mono);
    p->sharers_now = sharers_moved(p, k, mono);
    p->sharers_forced = p->sharers_now && !due; /* the whole walk is then the sharers' cost */
    return due || p->sharers_now;
}

void rt_tree_part_learn_cost(rt_tree_part *p, double cost)
{
    /* one walk dearer than twice the estimate raises it only twofold (one that took in many new
     * processes at once opened and rolled up each of them, which the walks after it do not), so
     * the next walk comes soon; when that one is dear too the cost is lasting, taken as it is */
    bool over = p->have_walk && cost > 2 * p->walk_cost_secs;
    p->walk_cost_secs = over && !p->walk_over ? 2 * p->walk_cost_secs : cost;
    p->walk_over = over;
}

/* After a walk that cost cost: moves the page-table mark and adds to the sharers' debt
 * what they alone asked for. The mark is where the tables would be had only the tree changed
 * since the last re-read for sharers: each walk shifts it by the tree's RSS change (summed over
 * its processes, each of which maps its pages through tables of its own) over pt_span. A walk
 * for sharers that finds the tables where the tree's own change puts them (most of the move) was
 * the tree's own (it mapped what no group charge showed: a file already in the page cache): its
 * cost is the clock's. Otherwise the sharers' debt takes the whole walk when nothing else would
 * have walked now, else the rollups read for sharers alone. A re-read for sharers that found the
 * tree's PSS where it was (pss_before: before the walk) sets the noise floor
 * (RT_SHARERS_NOISE_HALF). Returns whether the cost was the sharers' (not the clock's to learn). */
static bool sharers_account(rt_tree_part *p, double cost, double mono, uint64_t pss_before, double rss_before)
{
    double shifted = isnan(p->pt_mark) ? NAN : p->pt_mark + ((double)p->cur.rss_kib - (double)p->pt_rss) / p->pt_span;
    bool own = false;
    if (p->sharers_now && p->pt_now != RT_NULL_U64 && !isnan(shifted)) {
        double left = fabs((double)p->pt_now - shifted), all = fabs((double)p->pt_now - p->pt_mark);
        own = left * p->pt_span < RT_SHARERS_SHARE * (double)p->cur.pss_kib || left <= 0.5 * all;
    }
    if (p->sharers_now || isnan(shifted))
        p->pt_mark = p->pt_now == RT_NULL_U64 ? NAN : (double)p->pt_now;
    else
        p->pt_mark = shifted;
    p->pt_rss = p->cur.rss_kib;
    /* a re-read for sharers that found the tree's PSS where it was (and not right after one
     * that found it moved): the move was noise */
    if (p->sharers_now && !own && p->sharers_move > 0) { /* the page tables' (not the probe's) */
        bool found = !p->cur.pss_ok || pss_before == RT_NULL_U64 ||
                     fabs(((double)p->cur.pss_kib - (double)pss_before) - ((double)p->cur.rss_kib - rss_before)) >=
                         RT_SHARERS_SHARE / 2 * (double)pss_before;
        if (!found && !p->sharers_found) {
            p->sharers_noise = fmax(sharers_noise(p, mono), p->sharers_move);
            p->sharers_noise_mono = mono;
        }
        p->sharers_found = found;
    }
    bool theirs = p->sharers_forced && !own;
    double alone = rt_proctree_sharers_secs(p->tree); /* taken at every walk: it resets */
    double spent = theirs ? cost : alone;
    p->sharers_debt += spent;
    if (p->sharers_now && !own && spent > 0)
        p->sharers_cost = spent;
    return theirs;
}

void rt_tree_part_snapshot(rt_tree_part *p, double mono, bool walk, const rt_tree_clock *k)
{
    p->walked = walk;
    p->group_first = k != NULL;
    double interval = p->snap_mono > 0 ? mono - p->snap_mono : NAN; /* the sampling interval */
    p->snap_mono = mono;
    p->waits_now = false;
    if (!walk) {
        /* cur stays the last walk's: nothing of the walk grows in this interval but what the
         * light I/O pass reads, and the waits' pass of a small tree (the job's demand follows
         * its structure between walks: a pool's tail, one worker left, is not its head) */
        uint64_t r, w;
        if (k) {
            rt_proctree_io_light(p->tree, RT_TREE_IO_LIGHT_MAX, &r, &w);
            p->light_rd = r > p->light_rd ? r : p->light_rd;
            p->light_wr = w > p->light_wr ? w : p->light_wr;
        }
        if (rt_proctree_waits_light(p->tree, RT_TREE_WAITS_LIGHT_MAX, &p->light_wait_ns, &p->light_run_ns) == 0) {
            p->waits_now = true;
            p->demand_span = p->demand_mono > 0 ? mono - p->demand_mono : NAN;
            p->demand_mono = mono;
        }
        return;
    }
    p->light_rd = p->light_wr = 0; /* the walk reads it all again */
    double pss_age = isnan(p->walk_period) || !(p->pss_max_age > 0) /* 0: every walk re-reads, as asked */
                         ? p->pss_max_age
                         : fmax(p->pss_max_age, RT_WALK_PSS_CADENCES * p->walk_period);
    if (pss_age != p->pss_age_set) {
        rt_proctree_set_pss_max_age(p->tree, pss_age);
        p->pss_age_set = pss_age;
    }
    size_t keep = isnan(p->walk_period) ? RT_PROCTREE_KEEP_MAX : RT_PROCTREE_KEEP_MAX_SLOW;
    if (keep != p->keep_set) {
        rt_proctree_set_keep_max(p->tree, keep);
        p->keep_set = keep;
    }
    /* the group's memory fell since the last walk: reclaim or swap may have taken pages from
     * processes asleep since, whose quick path would carry their RSS and PSS as they were */
    if (k && fell(k->memory_bytes, p->walk_memory, RT_WALK_MOVED_SHARE))
        rt_proctree_read_all_next(p->tree);
    /* readings between walks, when any can come: the walk's cadence longer than the interval */
    rt_proctree_io_light_on(p->tree, k && !isnan(p->walk_period) && !(p->walk_period <= interval));
    if (p->sharers_now)
        rt_proctree_reread_exposed(p->tree, RT_SHARERS_SHARE);
    uint64_t pss_before = p->cur.pss_ok ? p->cur.pss_kib : RT_NULL_U64;
    double rss_before = (double)p->cur.rss_kib;
    double before = rt_thread_cpu_secs();
    rt_proctree_scan(p->tree, mono, &p->cur);
    rt_proctree_probe_arm(p->tree, p->sharers_now);
    double cost = rt_thread_cpu_secs() - before;
    cost = isnan(cost) || cost < 0 ? 0.0 : cost;
    if (!sharers_account(p, cost, mono, pss_before, rss_before))
        rt_tree_part_learn_cost(p, cost);
    p->demand_span = p->demand_mono > 0 ? mono - p->demand_mono : NAN;
    p->demand_mono = mono;
    if (p->exits_wanted && p->cur.children > 0) {
        rt_proctree_count_exits(p->tree);
        p->exits_wanted = false;
    }
    p->have_walk = true;
    p->walk_now = false;
    p->walk_mono = mono;
    p->walk_pids = k ? k->pids : RT_NULL_I64;
    p->walk_memory = k ? k->memory_bytes : RT_NULL_U64;
    if (p->walk_memory != RT_NULL_U64 && (p->walk_memory_high == RT_NULL_U64 || p->walk_memory > p->walk_memory_high))
        p->walk_memory_high = p->walk_memory;
}

/* Adds cur - prev of a counter to *acc (nothing when it went backwards); returns the delta. */
static uint64_t accumulate(uint64_t *acc, uint64_t cur, uint64_t prev)
{
    uint64_t d = rt_delta_u64(cur, prev);
    *acc += d;
    return d;
}

/* Reports the interval's CPU: what was counted now plus what earlier intervals could not
 * show, scaled down to the machine's busy time in the interval when it is more, or to the
 * most tasks the tree can have run in it (tasks: in cores, INFINITY when unknown). */
static void report_cpu(rt_tree_part *p, uint64_t dut, uint64_t dst, double elapsed, const rt_cpu *m, double tasks)
{
    rt_process *o = &p->out;
    double want_ut = p->carry_ut_ns + (double)dut, want_st = p->carry_st_ns + (double)dst;
    double want = want_ut + want_st;
    double cap_cores = m->core_count ? (double)m->core_count : INFINITY;
    if (!isnan(m->utilization_pct) && m->utilization_pct < cap_cores)
        cap_cores = m->utilization_pct;
    if (tasks < cap_cores)
        cap_cores = tasks;
    double cap_ns = elapsed > 0 ? cap_cores * elapsed * 1e9 : 0.0;
    double f = want > cap_ns ? cap_ns / want : 1.0;
    double rep_ut = want_ut * f, rep_st = want_st * f;
    p->carry_ut_ns = want_ut - rep_ut;
    p->carry_st_ns = want_st - rep_st;
    o->utime_secs = rep_ut / 1e9;
    o->stime_secs = rep_st / 1e9;
    o->cores_used = elapsed > 0 ? (rep_ut + rep_st) / 1e9 / elapsed : NAN;
}

/* The interval's waits for a CPU (rt_process.cpu_wait_cores), as the job's demand (tasks
 * runnable: running or waiting) less the cores it used. At a walk (or the waits' light pass of a
 * small tree between walks: the same files, kept open) the demand is what it saw:
 * each process's main thread's on-CPU time and run delay since its last reading, per second of
 * the walk's span, plus the interval's CPU it did not see (threads, processes not read at both
 * ends) with waits in the proportion it saw; between walks the last walk's demand stands (the
 * tasks' demand moves less than the CPU they get of it when other work comes and goes). */
static void report_waits(rt_tree_part *p, double elapsed)
{
    rt_process *o = &p->out;
    const rt_tree_totals *t = &p->cur;
    if (!(elapsed > 0) || !(o->cores_used >= 0)) {
        o->cpu_wait_cores = NAN;
        return;
    }
    if (p->walked || p->waits_now) {
        uint64_t wait_ns = p->walked ? t->wait_ns : p->light_wait_ns, run_ns = p->walked ? t->wait_run_ns : p->light_run_ns;
        double span = p->demand_span > 0 ? p->demand_span : elapsed; /* what the growth covers */
        double seen = (double)run_ns / 1e9 / span, unseen = o->cores_used - seen;
        if (run_ns > 0)
            p->wait_ratio = (double)wait_ns / (double)run_ns;
        double ratio = isnan(p->wait_ratio) ? 0 : p->wait_ratio;
        double known = seen + (double)wait_ns / 1e9 / span + (unseen > 0 ? unseen : 0);
        /* the unseen CPU's waits, no more than the tasks the tree had at this walk or the one
         * before could wait (a last interval of a few ms holds CPU the kernel counted late:
         * its task gone, that CPU times the waits' proportion read 4 tasks for a single one) */
        double room = fmax((double)t->threads, p->walk_threads) - known;
        p->demand = known + fmin(unseen > 0 ? unseen * ratio : 0, fmax(room, 0.0));
        p->walk_threads = (double)t->threads;
    }
    o->cpu_wait_cores = isnan(p->demand) ? NAN : fmax(p->demand - o->cores_used, 0.0);
}

/* Ends the carry once nothing of the tree runs (no process, or only zombies not yet reaped):
 * what the machine's ticks held back is shown in no later interval (the totals keep it;
 * dropped_ns books it). */
static void drop_carry(rt_tree_part *p)
{
    p->dropped_ns += p->carry_ut_ns + p->carry_st_ns;
    p->carry_ut_ns = p->carry_st_ns = 0.0;
}

/* The user part of the tree's own CPU: of this interval when it used any, else of everything
 * since tracking began, else all of it. */
static double walk_user_share(const rt_tree_part *p, uint64_t dut, uint64_t dst)
{
    if (dut + dst > 0)
        return (double)dut / (double)(dut + dst);
    if (p->ut_ns + p->st_ns > 0)
        return (double)p->ut_ns / (double)(p->ut_ns + p->st_ns);
    return 1.0;
}

/* The job's peak memory: its group's peak charge, when the group is the job's (made for it,
 * or holding only the tree); NaN otherwise (a shared group's peak is not the tree's). */
static double peak_of(const rt_tree_group *g)
{
    return g && (g->cgroup->own || g->exclusive) ? g->cgroup->memory_peak_mib : NAN;
}

/* Whether the group counts for the tree in this interval: exclusive now and since the
 * stretch began (the previous reading was exclusive too). */
static bool group_counts(const rt_tree_part *p, const rt_tree_group *g)
{
    return p->stretch && g && g->exclusive;
}

/* The interval's CPU as counted into the reported totals: the walk's growth (dut, dst), or
 * within an exclusive stretch the larger of the group's and the walk's growth since the
 * stretch began (walk_ns: the walk's total to compare, see floor_walk), past what has been
 * reported since then, split by the group's user share (the walk's without one). Sets *cut
 * and *cst. */
static void counted_cpu(rt_tree_part *p, const rt_tree_group *g, uint64_t walk_ns, uint64_t dut, uint64_t dst,
                        uint64_t *cut, uint64_t *cst)
{
    *cut = dut;
    *cst = dst;
    if (!group_counts(p, g) || g->cpu_ns == RT_NULL_U64 || p->base_g_cpu == RT_NULL_U64)
        return;
    uint64_t dg = rt_delta_u64(g->cpu_ns, p->base_g_cpu), dw = rt_delta_u64(walk_ns, p->base_walk_cpu);
    uint64_t want = p->base_tot_cpu + (dg > dw ? dg : dw);
    uint64_t tot = p->tot_ut_ns + p->tot_st_ns;
    uint64_t d = want > tot ? want - tot : 0;
    double share = isnan(g->user_share) ? walk_user_share(p, dut, dst) : g->user_share;
    *cut = (uint64_t)llround((double)d * share);
    if (*cut > d)
        *cut = d;
    *cst = d - *cut;
}

/* The walk's CPU total that the group's reading is held against: the walk's total now when
 * the walk came before the group was read, or when nothing of the tree runs any more; else
 * (the job's own group read first, rt_tree_part_snapshot's k) the total as it stood before
 * this reading's walk (walk_before). A walk read after the group counts what the tree ran in
 * between, the more the longer it took or the longer the tracker waited for a CPU there:
 * taken as it is, that lead lands in this interval as cores no process used (a busy process
 * at 1.31 cores, the tracker preempted between the two reads) and comes off the next one. The
 * walk's total is a floor for what the group misses, a lead only one reading late. */
static uint64_t floor_walk(const rt_tree_part *p, uint64_t walk_before)
{
    if (p->group_first && p->walked && p->cur.running > 0)
        return walk_before;
    return p->ut_ns + p->st_ns;
}

/* Raises the reported I/O total *tot: by the walk's growth d, or within an exclusive stretch
 * to the total reported when it began (base_tot) plus the larger of the group's growth since
 * then (gv - base_g; none when the group has no storage counters) and the walk's (walk -
 * base_walk, the light I/O pass's growth since the last walk in walk: what the pass counted
 * and the next walk counts again is held once). Returns the growth of *tot. */
static uint64_t counted_io(uint64_t *tot, bool counts, uint64_t gv, uint64_t base_g, uint64_t base_tot, uint64_t walk,
                           uint64_t base_walk, uint64_t d)
{
    uint64_t before = *tot;
    if (counts) {
        uint64_t dg = gv != RT_NULL_U64 && base_g != RT_NULL_U64 ? rt_delta_u64(gv, base_g) : 0;
        uint64_t dw = rt_delta_u64(walk, base_walk);
        uint64_t want = base_tot + (dg > dw ? dg : dw);
        if (want > *tot)
            *tot = want;
    } else {
        *tot += d;
    }
    return *tot - before;
}

/* Starts an exclusive stretch at this reading (the group's counters and the totals as they
 * stand), or ends one when the group is not exclusive. from_start: the tree counts from zero
 * and so does the group (it was made for it). */
static void mark_stretch(rt_tree_part *p, const rt_tree_group *g, bool from_start)
{
    bool excl = g && g->exclusive;
    if (!excl || p->stretch) {
        p->stretch = excl;
        return;
    }
    p->stretch = true;
    p->base_g_cpu = from_start && g->cpu_ns != RT_NULL_U64 ? 0 : g->cpu_ns;
    p->base_g_rd = from_start && g->read_bytes != RT_NULL_U64 ? 0 : g->read_bytes;
    p->base_g_wr = from_start && g->write_bytes != RT_NULL_U64 ? 0 : g->write_bytes;
    p->base_tot_cpu = p->tot_ut_ns + p->tot_st_ns;
    p->base_tot_rd = p->tot_rd;
    p->base_tot_wr = p->tot_wr;
    p->base_walk_rd = p->rd + p->light_rd; /* as counted_io counts the walk in the stretch */
    p->base_walk_wr = p->wr + p->light_wr;
    p->base_walk_cpu = from_start ? 0 : p->ut_ns + p->st_ns;
}

/* A part's memory in MiB from the walk's split (NaN when a rollup was missing). */
static void split_memory(rt_process_part *o, const rt_tree_split *s)
{
    o->private_rss_mib = s->mem_ok ? (double)s->private_kib / 1024.0 : NAN;
    o->shared_rss_mib = s->mem_ok ? (double)s->shared_kib / 1024.0 : NAN;
    o->total_rss_mib = s->mem_ok ? (double)(s->private_kib + s->shared_kib) / 1024.0 : NAN;
    o->thread_count = s->threads;
}

/* The root's share of the tree's CPU in this interval: its own growth over the walk's (walk_ns:
 * dut + dst); when the walk grew by nothing, its share since tracking began; with no CPU seen
 * at all, everything while the root lives. */
static double root_share(rt_tree_part *p, double walk_ns)
{
    uint64_t cur = p->cur.root_own_ns, prev = p->prev_root_own;
    double own_ns = cur != RT_NULL_U64 && prev != RT_NULL_U64 && cur > prev ? (double)(cur - prev) : 0.0;
    p->root_sum_ns += own_ns;
    p->walk_sum_ns += walk_ns;
    if (walk_ns > 0)
        return fmin(own_ns / walk_ns, 1.0);
    if (p->walk_sum_ns > 0)
        return fmin(p->root_sum_ns / p->walk_sum_ns, 1.0);
    return p->cur.root_alive ? 1.0 : 0.0;
}

/* Fills the split of the tree's figures into the root (main), its descendants and both; the
 * combined cores and VRAM are the tree's own (o's, already set). walk_ns: the walk's CPU
 * growth in the interval; main_vram: what the GPUs list for the root (RT_NULL_U64: no GPU
 * data). */
static void report_split(rt_tree_part *p, double walk_ns, uint64_t main_vram)
{
    rt_process *o = &p->out;
    rt_process_part *m = &p->parts[0], *d = &p->parts[1], *c = &p->parts[2];
    split_memory(m, &p->cur.main);
    split_memory(d, &p->cur.descendants);
    split_memory(c, &p->cur.combined);
    double share = root_share(p, walk_ns);
    c->cores_used = o->cores_used;
    m->cores_used = o->cores_used * share;
    d->cores_used = o->cores_used - m->cores_used;
    c->gpu_vram_used_bytes = o->gpu_vram_used_bytes;
    m->gpu_vram_used_bytes = c->gpu_vram_used_bytes == RT_NULL_U64 ? RT_NULL_U64 : main_vram;
    if (m->gpu_vram_used_bytes != RT_NULL_U64 && m->gpu_vram_used_bytes > c->gpu_vram_used_bytes)
        m->gpu_vram_used_bytes = c->gpu_vram_used_bytes;
    d->gpu_vram_used_bytes =
        m->gpu_vram_used_bytes == RT_NULL_U64 ? c->gpu_vram_used_bytes : c->gpu_vram_used_bytes - m->gpu_vram_used_bytes;
}

/* States how old the walk's figures are in this sample and the cadence the walk keeps. */
static void report_walk_age(rt_tree_part *p, double elapsed, double mono)
{
    rt_process *o = &p->out;
    o->walk_age_secs = p->walked || !p->have_walk ? 0.0 : fmax(mono - p->walk_mono, 0.0);
    o->walk_period_secs = isnan(p->walk_period) ? elapsed : fmax(p->walk_period, elapsed);
}

/* The tree's tasks (threads) at this reading: its group's count when the group holds nothing
 * but the tree, else the walk's when this reading walked; RT_NULL_I64 when neither says. */
static int64_t tasks_now(const rt_tree_part *p, const rt_tree_group *g)
{
    if (g && g->exclusive && g->cgroup && g->cgroup->pids != RT_NULL_I64)
        return g->cgroup->pids;
    return p->walked ? p->cur.threads : RT_NULL_I64;
}

/* The most cores the tree can have used in the interval: no more tasks ran in it than it had
 * at either end plus every task the machine made meanwhile (forks: /proc/stat's `processes`
 * moved by that much; a task the tree made is one of them), each on one core at most.
 * INFINITY when a count is unknown. The kernel's CPU counters take a running task's time in
 * at its next tick (4 ms at HZ=250) or switch, so an interval a few milliseconds long (the
 * last sample, taken as the command ends) can hold time run before it: a single-threaded job
 * showed 1.93 cores over the 1 ms of its last sample. That time is carried like any other. */
static double tasks_cap(const rt_tree_part *p, int64_t now, uint64_t forks)
{
    if (now == RT_NULL_I64 || p->tasks_prev == RT_NULL_I64 || forks == RT_NULL_U64)
        return INFINITY;
    return (double)(now > p->tasks_prev ? now : p->tasks_prev) + (double)forks;
}

/* The split of the first reading of a tree counted from zero: nothing used yet, as the rest
 * of that reading (it is the baseline, never a sample of its own). */
static void zero_split(rt_tree_part *p)
{
    for (int i = 0; i < 3; i++)
        p->parts[i] = (rt_process_part){0, 0, 0, 0, 0, RT_NULL_U64};
}

void rt_tree_part_delta(rt_tree_part *p, double elapsed, const rt_cpu *machine, uint64_t forks, rt_gpu_part *gpus,
                        double mono, const rt_tree_group *group)
{
    rt_process *o = &p->out;
    const rt_tree_totals *t = &p->cur;
    int64_t tasks = tasks_now(p, group);
    p->counted = false;
    o->pid = p->root_pid;
    o->main = &p->parts[0];
    o->descendants = &p->parts[1];
    o->combined = &p->parts[2];
    if (!p->have_prev) {
        /* The baseline. With --pid, what the tree used before tracking began is not counted.
         * A tree the caller started itself counts from zero: prev stays zero, and the first
         * sample covers the command's whole life, its first milliseconds included. */
        p->have_prev = true;
        p->prev_root_own = p->from_zero ? 0 : t->root_own_ns;
        if (p->from_zero) {
            memset(o, 0, sizeof *o);
            o->pid = p->root_pid;
            o->main = &p->parts[0];
            o->descendants = &p->parts[1];
            o->combined = &p->parts[2];
            zero_split(p);
            o->gpu_utilization_pct = NAN;
            o->gpu_vram_used_bytes = RT_NULL_U64;
            o->gpu_count_used = RT_NULL_I64;
            o->gpu_vram_peak_bytes = RT_NULL_U64;
            o->gpu_work = rt_gpu_work_null;
            o->gpu_work_scope = NULL;
            o->gpu_count_busy = RT_NULL_I64;
            o->gpu_vram_per_gpu_max_bytes = RT_NULL_U64;
            o->cpu_wait_cores = 0;
            o->exits_counted = t->exits_seen >= 0 ? t->exits_seen : RT_NULL_I64;
            o->unwaited_parents = t->unwaited_parents;
            o->unread_count = t->unread;
            o->memory_peak_mib = peak_of(group);
            o->cgroup = group ? group->cgroup : NULL;
            mark_stretch(p, group, true);
            report_walk_age(p, elapsed, mono);
            p->tasks_prev = tasks;
            return;
        }
        p->prev = *t;
        mark_stretch(p, group, false);
    }
    const rt_tree_totals *q = &p->prev;
    uint64_t walk_before = p->ut_ns + p->st_ns;
    uint64_t dut = accumulate(&p->ut_ns, t->utime_ns, q->utime_ns);
    uint64_t dst = accumulate(&p->st_ns, t->stime_ns, q->stime_ns);
    uint64_t drd = accumulate(&p->rd, t->read_bytes, q->read_bytes);
    uint64_t dwr = accumulate(&p->wr, t->write_bytes, q->write_bytes);
    accumulate(&p->cancelled, t->cancelled_write_bytes, q->cancelled_write_bytes);
    p->counted = true;

    uint64_t cut, cst;
    counted_cpu(p, group, floor_walk(p, walk_before), dut, dst, &cut, &cst);
    p->tot_ut_ns += cut;
    p->tot_st_ns += cst;
    bool counts = group_counts(p, group);
    bool group_io = counts && group->read_bytes != RT_NULL_U64 && group->write_bytes != RT_NULL_U64;
    /* within the stretch, the walk's count includes the light I/O pass's growth since the walk */
    drd = counted_io(&p->tot_rd, counts, counts ? group->read_bytes : RT_NULL_U64, p->base_g_rd, p->base_tot_rd,
                     p->rd + p->light_rd, p->base_walk_rd, drd);
    dwr = counted_io(&p->tot_wr, counts, counts ? group->write_bytes : RT_NULL_U64, p->base_g_wr, p->base_tot_wr,
                     p->wr + p->light_wr, p->base_walk_wr, dwr);

    o->alive = t->root_alive;
    o->child_count = t->children;
    o->thread_count = t->threads;
    o->unread_count = t->unread;
    report_cpu(p, cut, cst, elapsed, machine, tasks_cap(p, tasks, forks));
    report_waits(p, elapsed);
    p->tasks_prev = tasks;
    if (t->running == 0)
        drop_carry(p);
    o->cpu_secs_total = (double)(p->tot_ut_ns + p->tot_st_ns) / 1e9;
    o->pss_mib = t->pss_ok ? (double)t->pss_kib / 1024.0 : NAN;
    o->swap_mib = t->pss_ok ? (double)t->swap_kib / 1024.0 : NAN;
    o->rss_mib = (double)t->rss_kib / 1024.0;
    o->vms_mib = (double)t->vms_bytes / 1048576.0;
    o->rss_peak_mib = (double)t->rss_peak_kib / 1024.0; /* the tree keeps it: never decreasing */
    o->rss_hwm_mib = (double)t->rss_hwm_kib / 1024.0;   /* so does this one */
    o->rss_hwm_tree_mib = (double)t->rss_hwm_tree_kib / 1024.0; /* and this */
    o->exits_counted = t->exits_seen >= 0 ? t->exits_seen : RT_NULL_I64;
    o->unwaited_parents = t->unwaited_parents;
    if (t->io_ok || group_io) {
        o->read_bytes = p->tot_rd - p->shown_rd;
        o->write_bytes = p->tot_wr - p->shown_wr;
        p->shown_rd = p->tot_rd;
        p->shown_wr = p->tot_wr;
        o->read_bytes_total = p->tot_rd;
        o->write_bytes_total = p->tot_wr;
        o->cancelled_write_bytes_total = t->io_ok ? p->cancelled : RT_NULL_U64;
        o->read_bytes_per_sec = elapsed > 0 ? (double)drd / elapsed : NAN;
        o->write_bytes_per_sec = elapsed > 0 ? (double)dwr / elapsed : NAN;
    } else {
        o->read_bytes = o->write_bytes = o->read_bytes_total = o->write_bytes_total = RT_NULL_U64;
        o->cancelled_write_bytes_total = RT_NULL_U64;
        o->read_bytes_per_sec = o->write_bytes_per_sec = NAN;
    }
    o->memory_peak_mib = peak_of(group);
    o->cgroup = group ? group->cgroup : NULL;
    if (group && group->cgroup->own && isfinite(o->memory_peak_mib))
        rt_proctree_stop_exits(p->tree); /* the job's own group counts its memory: its figure is the need */
    mark_stretch(p, group, false);
    uint64_t main_vram = rt_gpu_part_tree(gpus, p->tree, mono, o);
    report_split(p, (double)dut + (double)dst, main_vram);
    report_walk_age(p, elapsed, mono);
}

/* The tree's totals only grow (processes that leave it are closed into its departed account),
 * so a reading below the previous one is an artifact of a scan that caught a process between
 * two states: the previous figure stays as the mark, and the climb back to it is not counted
 * a second time. */
static void keep_mark(uint64_t *prev, uint64_t cur)
{
    if (cur > *prev)
        *prev = cur;
}

void rt_tree_part_commit(rt_tree_part *p)
{
    if (!p->counted)
        return;
    rt_tree_totals mark = p->prev;
    p->prev = p->cur;
    keep_mark(&p->prev.utime_ns, mark.utime_ns);
    keep_mark(&p->prev.stime_ns, mark.stime_ns);
    keep_mark(&p->prev.read_bytes, mark.read_bytes);
    keep_mark(&p->prev.write_bytes, mark.write_bytes);
    keep_mark(&p->prev.cancelled_write_bytes, mark.cancelled_write_bytes);
    if (p->cur.root_own_ns != RT_NULL_U64 && (p->prev_root_own == RT_NULL_U64 || p->cur.root_own_ns > p->prev_root_own))
        p->prev_root_own = p->cur.root_own_ns;
}

/* An I/O total at a mark: the last sample's total (tot) plus the light walk's growth since the
 * last walk (d), or, within an exclusive stretch (grouped: as counted_io counts), the larger of
 * that sample's total and the walk's count on the stretch's basis: between walks tot already
 * holds the group's growth and the light I/O pass's since the last walk, which d counts
 * again. */
static double peek_io(bool grouped, uint64_t tot, uint64_t base_tot, uint64_t walk, uint64_t base_walk, uint64_t d)
{
    if (!grouped)
        return (double)tot + (double)d;
    return fmax((double)tot, (double)base_tot + (double)rt_delta_u64(walk + d, base_walk));
}

void rt_tree_part_peek(rt_tree_part *p, const rt_tree_peek *k, uint64_t group_cpu_ns, rt_tree_reading *out)
{
    const rt_tree_totals *q = &p->prev;
    double ticks = (double)(p->tot_ut_ns + p->tot_st_ns) + (double)rt_delta_u64(k->utime_ns, q->utime_ns) +
                   (double)rt_delta_u64(k->stime_ns, q->stime_ns);
    if (p->stretch && group_cpu_ns != RT_NULL_U64 && p->base_g_cpu != RT_NULL_U64) {
        /* the group's exact counter, as counted_cpu bases it (its growth since the stretch
         * began on the totals reported then): one cumulative counter while the stretch lasts */
        out->cpu_source = RT_PHASE_CPU_GROUP;
        out->cpu_ns = (double)p->base_tot_cpu + (double)rt_delta_u64(group_cpu_ns, p->base_g_cpu);
    } else if (k->exact_ok) {
        if (!p->peek_have_offset) {
            p->peek_offset_ns = (double)k->exact_ns - ticks;
            p->peek_have_offset = true;
        }
        out->cpu_source = RT_PHASE_CPU_SCHEDSTAT;
        out->cpu_ns = (double)k->exact_ns - p->peek_offset_ns;
    } else {
        out->cpu_source = RT_PHASE_CPU_TICKS;
        out->cpu_ns = ticks;
    }
    if (k->exact_ok && k->root_exact_ns != RT_NULL_U64)
        out->others_ns = k->exact_ns > k->root_exact_ns ? (double)(k->exact_ns - k->root_exact_ns) : 0.0;
    else
        out->others_ns = k->root_ns == RT_NULL_U64 ? NAN
                         : k->utime_ns + k->stime_ns > k->root_ns ? (double)(k->utime_ns + k->stime_ns - k->root_ns)
                                                                   : 0.0;
    if (k->io_ok) {
        out->read_bytes = peek_io(p->stretch, p->tot_rd, p->base_tot_rd, p->rd, p->base_walk_rd,
                                  rt_delta_u64(k->read_bytes, q->read_bytes));
        out->write_bytes = peek_io(p->stretch, p->tot_wr, p->base_tot_wr, p->wr, p->base_walk_wr,
                                   rt_delta_u64(k->write_bytes, q->write_bytes));
    } else {
        out->read_bytes = out->write_bytes = NAN;
    }
    out->rss_mib = (double)k->rss_kib / 1024.0;
}

void rt_tree_part_close(rt_tree_part *p)
{
    rt_proctree_free(p->tree);
}
