/* textfile_sink.c - node_exporter's textfile kept up to date as a sink: the tree's CPU seconds
 * and peak memory so far, the samples taken, rewritten at the first sample and then at most once
 * every every_secs while the job runs, and once more at the run's end with its end time and exit
 * status (rt_prom_textfile_write writes the file). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/job.h"
#include "../core/request.h"
#include "pipeline.h"

typedef struct textfile {
    char *dir, *name, *label;
    rt_job job; /* strings in job_block */
    void *job_block;
    double start_secs, every_secs, last_write_mono;
    uint64_t samples;
    double cpu_secs, peak_bytes;
    double energy_j;      /* the tree's energy so far; NaN */
    char energy_method[16]; /* its method; "": none */
    rt_request_copy request; /* what the job was given: the first sample's */
    bool warned;
    rt_logger log;
} textfile;

/* Writes the file with the figures so far; exit_status RT_NULL_I64 while the job runs. A failure
 * is said once while running, and at the end. */
static void write_file(textfile *tf, bool end, int64_t exit_status)
{
    double now = rt_real_secs();
    rt_job_status st = RT_JOB_STATUS_INIT;
    st.start_secs = tf->start_secs;
    st.end_secs = end ? now : NAN;
    st.duration_secs = now - tf->start_secs;
    st.cpu_secs = tf->cpu_secs;
    st.memory_peak_bytes = tf->peak_bytes;
    st.exit_status = exit_status;
    st.samples = tf->samples;
    st.energy_joules = tf->energy_j;
    st.energy_method = tf->energy_method[0] ? tf->energy_method : NULL;
    st.request = tf->request.set ? &tf->request.r : NULL;
    char path[4096];
    rt_error e = rt_prom_textfile_write(tf->dir, tf->name, &tf->job, &st, path, sizeof path);
    if (e == RT_OK)
        return;
    if (end || !tf->warned)
        rt_log(&tf->log, RT_LOG_WARN, "%s: cannot write in '%s': %s", tf->label, tf->dir,
               e == RT_ERR_IO ? strerror(errno) : rt_strerror(e));
    tf->warned = true;
}

static rt_error textfile_add(void *self, const rt_sample *s, const rt_record *rec)
{
    (void)rec;
    textfile *tf = self;
    if (!s)
        return RT_OK;
    tf->samples++;
    if (s->request && !tf->request.set)
        rt_request_keep(&tf->request, s->request);
    const rt_process *p = s->process;
    if (p) {
        if (isfinite(p->cpu_secs_total)) /* a null figure does not wipe the last known one */
            tf->cpu_secs = p->cpu_secs_total;
        double peak = isfinite(p->memory_peak_mib) ? p->memory_peak_mib : p->rss_peak_mib;
        if (isfinite(peak) && !(peak * 1048576.0 <= tf->peak_bytes))
            tf->peak_bytes = peak * 1048576.0;
    }
    const rt_energy *e = s->energy;
    if (e && e->process_method && isfinite(e->process_energy_joules_total) &&
        strlen(e->process_method) < sizeof tf->energy_method) { /* a null figure keeps the last known */
        tf->energy_j = e->process_energy_joules_total;
        memcpy(tf->energy_method, e->process_method, strlen(e->process_method) + 1);
    }
    double mono = rt_mono_secs();
    if (tf->samples == 1 || mono - tf->last_write_mono >= tf->every_secs) {
        tf->last_write_mono = mono;
        write_file(tf, false, RT_NULL_I64);
    }
    return RT_OK;
}

static rt_error textfile_finish(void *self, const rt_run_end *end)
{
    write_file(self, true, end->exit_status);
    return RT_OK;
}

static void textfile_free(void *self)
{
    textfile *tf = self;
    if (!tf)
        return;
    rt_free_all(tf->dir, tf->name, tf->label, tf->job_block);
    free(tf);
}

rt_error rt_textfile_sink_new(const rt_textfile_options *opts, rt_sink **out)
{
    static const rt_sink_ops ops = {
        .struct_size = sizeof ops, .add = textfile_add, .finish = textfile_finish, .free = textfile_free};
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_textfile_options o = RT_TEXTFILE_OPTIONS_INIT;
    if (!opts || rt_struct_copy(&o, sizeof o, opts) < 0 || !o.dir || !(o.every_secs >= 0))
        return RT_ERR_INVALID;
    textfile *tf = calloc(1, sizeof *tf);
    if (!tf)
        return RT_ERR_NOMEM;
    tf->dir = strdup(o.dir);
    tf->name = o.name ? strdup(o.name) : NULL;
    tf->label = strdup(o.label ? o.label : "textfile");
    rt_error e = tf->dir && tf->label && (!o.name || tf->name) ? RT_OK : RT_ERR_NOMEM;
    if (e == RT_OK)
        e = rt_job_dup(o.job, &tf->job, &tf->job_block);
    if (e != RT_OK) {
        textfile_free(tf);
        return e;
    }
    tf->every_secs = o.every_secs > 0 ? o.every_secs : 5.0;
    tf->start_secs = o.start_secs > 0 ? o.start_secs : rt_real_secs();
    tf->cpu_secs = tf->peak_bytes = tf->energy_j = NAN;
    tf->log = (rt_logger){o.log, o.log_user};
    e = rt_sink_new(&ops, tf, out);
    if (e != RT_OK)
        textfile_free(tf);
    return e;
}
