/* place.c - where a tracking run's job runs (--place auto|off): the library's rt_place found at
 * the start, its request handed to the sampler, its job metadata merged under the user's (a
 * field or a tag key the user gave wins), and the run's place in a job of several nodes under
 * --job-id and --node. */
#define _GNU_SOURCE /* gethostname, asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Whether tags[0..n) has one with the key of kv ("key=..."). */
static bool has_key(const char *const *tags, size_t n, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < n; i++)
        if (strncmp(tags[i], kv, klen) == 0 && tags[i][klen] == '=')
            return true;
    return false;
}

/* This machine's name (NULL when it cannot be had): the node's name where nothing else says one. */
static const char *host_name(void)
{
    static char host[256];
    if (gethostname(host, sizeof host) != 0)
        return NULL;
    host[sizeof host - 1] = '\0';
    return host;
}

/* The member's job, node and rank as the job's tags job_id, node and rank (those said, where the
 * user's or the place's tags have no such key): every exporter's labels (tag_job_id, tag_node,
 * tag_rank), the Sentinel run's metadata and the history then group a job's nodes. Out of
 * memory: the tags stay as they were. */
static void member_tags(cli_options *o)
{
    static char kv[3][300];
    const rt_member *m = &o->member;
    if (!m->job_id)
        return;
    rt_job *j = &o->job;
    const char **tags = calloc(j->tag_count + 4, sizeof *tags);
    if (!tags)
        return;
    size_t n = 0;
    for (size_t i = 0; i < j->tag_count; i++)
        tags[n++] = j->tags[i];
    snprintf(kv[0], sizeof kv[0], "job_id=%s", m->job_id);
    snprintf(kv[1], sizeof kv[1], "node=%s", m->node ? m->node : "");
    snprintf(kv[2], sizeof kv[2], "rank=%lld", (long long)m->rank);
    for (size_t i = 0; i < 3; i++)
        if ((i != 1 || m->node) && (i != 2 || m->rank >= 0) && !has_key(tags, n, kv[i]))
            tags[n++] = kv[i];
    free(o->place_tags);
    o->place_tags = tags;
    j->tags = tags;
    j->tag_count = n;
}

/* The run's place in a job of several nodes: what the launchers' variables said (found; NULL
 * with --place off), under the user's --job-id and --node; the node is the host name where
 * nothing names it. */
static void member_apply(cli_options *o, const rt_member *found)
{
    rt_member m = RT_MEMBER_INIT;
    if (found)
        m = *found;
    if (o->job_id) {
        m.job_id = o->job_id;
        if (!m.from)
            m.from = "given";
    }
    if (o->node)
        m.node = o->node;
    if (m.job_id && !m.node)
        m.node = host_name();
    o->member = m;
    member_tags(o);
}

void cli_place_apply(cli_options *o)
{
    if (o->place_off)
        member_apply(o, NULL);
    if (o->place_off || o->place)
        return;
    rt_place_options po = RT_PLACE_OPTIONS_INIT;
    po.log = cli_log;
    rt_place *p = NULL;
    if (rt_place_detect(&po, &p) != RT_OK) {
        cli_say("warning: out of memory: where the job runs is not known");
        member_apply(o, NULL);
        return;
    }
    const rt_job *pj = rt_place_job(p);
    const char **tags = calloc(o->job.tag_count + pj->tag_count + 1, sizeof *tags);
    if (!tags) {
        rt_place_free(p);
        cli_say("warning: out of memory: where the job runs is not known");
        member_apply(o, NULL);
        return;
    }
    o->place = p;
    o->request = rt_place_request(p);
    rt_job *j = &o->job;
    /* the fields the user did not give */
    const char **mine[] = {&j->job_name, &j->project_name, &j->stage_name, &j->task_name, &j->team, &j->env,
                           &j->language, &j->orchestrator, &j->executor, &j->external_run_id, &j->container_image};
    const char *const theirs[] = {pj->job_name, pj->project_name, pj->stage_name, pj->task_name,
                                  pj->team, pj->env, pj->language, pj->orchestrator, pj->executor,
                                  pj->external_run_id, pj->container_image};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (!*mine[i] && theirs[i])
            *mine[i] = theirs[i];
    size_t n = 0;
    for (size_t i = 0; i < j->tag_count; i++)
        tags[n++] = j->tags[i];
    for (size_t i = 0; i < pj->tag_count; i++)
        if (!has_key(tags, n, pj->tags[i]))
            tags[n++] = pj->tags[i];
    o->place_tags = tags;
    j->tags = tags;
    j->tag_count = n;
    member_apply(o, rt_place_member(p));
}

int64_t cli_per_node_rank(const cli_options *o)
{
    if (o->place_off)
        return -1; /* no launcher is read */
    rt_place_options po = RT_PLACE_OPTIONS_INIT;
    po.no_query = 1; /* the variables alone: a task that runs untracked asks SLURM nothing */
    rt_place *p = NULL;
    if (rt_place_detect(&po, &p) != RT_OK)
        return -1;
    int64_t r = rt_place_member(p)->local_rank;
    rt_place_free(p);
    return r;
}

/* name with every character a file name should not hold ('/', a control, a space) made '_'. */
static void file_safe(char *name)
{
    for (char *p = name; *p; p++)
        if (*p == '/' || (unsigned char)*p <= ' ' || *p == 0x7f)
            *p = '_';
}

void cli_run_file_name(const cli_options *o, char *name, size_t cap)
{
    const rt_member *m = &o->member;
    char rank[32] = "";
    if (m->job_id) {
        if (m->rank >= 0)
            snprintf(rank, sizeof rank, ".r%lld", (long long)m->rank);
        snprintf(name, cap, "%s.%s%s", m->job_id, m->node ? m->node : "node", rank);
    } else {
        const char *host = host_name();
        snprintf(name, cap, "%s.%ld", host ? host : "host", (long)getpid());
    }
    file_safe(name);
}

int cli_output_in_dir(cli_options *o)
{
    size_t len = o->output ? strlen(o->output) : 0;
    if (len == 0 || o->output[len - 1] != '/')
        return 0;
    const char *ext = o->format == RT_FORMAT_CSV ? "csv" : "jsonl";
    char name[512];
    cli_run_file_name(o, name, sizeof name);
    free(o->output_named);
    if (asprintf(&o->output_named, "%s%s.%s", o->output, name, ext) < 0) {
        o->output_named = NULL;
        cli_say("out of memory");
        return -1;
    }
    o->output = o->output_named;
    return 0;
}

void cli_place_free(cli_options *o)
{
    free(o->output_named);
    o->output_named = NULL;
    free(o->place_tags);
    o->place_tags = NULL;
    rt_place_free(o->place);
    o->place = NULL;
    o->request = NULL;
    rt_member none = RT_MEMBER_INIT;
    o->member = none;
}
