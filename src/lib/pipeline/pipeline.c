/* pipeline.c - the one fan-out of samples: a pipeline holds sinks in order, makes each sample's
 * record once (from the sample's row as the embedded tracker's store keeps it, so that the
 * statistics see the same figures in the tool, in the embedded tracker and in a run read back),
 * hands sample and record to every sink still taking them, pushes the host's facts to them (the
 * sinks copy them; the pipeline keeps nothing of them), carries the job's phase marks to them
 * with the next sample (rt_sample.phases, rt_record.phases), and ends and frees them in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../analysis/record.h"
#include "../core/job.h"
#include "../phase/phase.h"
#include "pipeline.h"

struct rt_pipeline {
    rt_sink **sinks;
    size_t n, cap;
    bool records; /* some sink reads records */
    bool finished;
    rt_job job; /* for the records' job_name; strings in job_block */
    void *job_block;
    rt_phase_state *phases; /* NULL until the first mark */
};

rt_error rt_pipeline_new(const rt_job *job, rt_pipeline **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return RT_ERR_NOMEM;
    rt_error err = rt_job_dup(job, &p->job, &p->job_block);
    if (err != RT_OK) {
        free(p);
        return err;
    }
    *out = p;
    return RT_OK;
}

void rt_sink_free(rt_sink *s)
{
    if (!s)
        return;
    if (s->ops.free)
        s->ops.free(s->self);
    free(s);
}

rt_error rt_pipeline_attach(rt_pipeline *p, rt_sink *sink)
{
    if (!p || !sink) {
        rt_sink_free(sink);
        return RT_ERR_INVALID;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        rt_sink **s = realloc(p->sinks, cap * sizeof *s);
        if (!s) {
            rt_sink_free(sink);
            return RT_ERR_NOMEM;
        }
        p->sinks = s;
        p->cap = cap;
    }
    sink->done = false;
    p->sinks[p->n++] = sink;
    if (sink->ops.reads_record)
        p->records = true;
    return RT_OK;
}

void rt_pipeline_set_host(rt_pipeline *p, const rt_host *host, const rt_cloud *cloud)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->sinks[i]->ops.set_host)
            p->sinks[i]->ops.set_host(p->sinks[i]->self, host, cloud);
}

/* Every sink still taking them gets sample and rec (rec only where it reads records; a sink
 * that takes no records gets nothing when sample is NULL). */
static rt_error fan_out(rt_pipeline *p, const rt_sample *sample, const rt_record *rec)
{
    rt_error first = RT_OK;
    int first_errno = 0;
    for (size_t i = 0; i < p->n; i++) {
        rt_sink *s = p->sinks[i];
        if (s->done || (!sample && !s->ops.reads_record))
            continue;
        rt_error e = s->ops.add(s->self, sample, s->ops.reads_record ? rec : NULL);
        if (e != RT_OK) {
            s->done = true;
            if (first == RT_OK) {
                first = e;
                first_errno = errno;
            }
        }
    }
    if (first != RT_OK)
        errno = first_errno;
    return first;
}

/* The sample as the sinks see it: with the phases when the run has had a mark (copy holds it). */
static const rt_sample *with_phases(const rt_sample *sample, const rt_phases *ph, rt_sample *copy)
{
    if (!sample || !ph)
        return sample;
    *copy = *sample;
    copy->phases = ph;
    return copy;
}

static rt_error add_row(rt_pipeline *p, const rt_sample *sample, const double row[RT_NCOLS], const rt_phases *ph)
{
    rt_record rec;
    rt_row_to_record(row, &rec);
    rec.job_name = p->job.job_name;
    if (sample && sample->gpu_count) { /* the GPUs one by one, for the usage's choice of GPUs */
        rec.gpu = sample->gpu;
        rec.gpu_n = sample->gpu_count;
    }
    rec.phases = ph;
    rec.energy = sample ? sample->energy : NULL; /* the domains and notes: the row has the figures */
    rec.request = sample ? sample->request : NULL; /* what the job was given: not in the row */
    rec.member = sample ? sample->member : NULL;   /* the run's place in a job of several */
    rt_sample copy;
    rt_error err = fan_out(p, with_phases(sample, ph, &copy), &rec);
    rt_phase_state_carried(p->phases);
    return err;
}

rt_error rt_pipeline_add_row(rt_pipeline *p, const rt_sample *sample, const double row[RT_NCOLS])
{
    return add_row(p, sample, row, rt_phase_state_view(p->phases));
}

rt_error rt_pipeline_add(rt_pipeline *p, const rt_sample *sample)
{
    if (!p || !sample || p->finished)
        return RT_ERR_INVALID;
    const rt_phases *ph = rt_phase_state_view(p->phases);
    if (!p->records) {
        rt_sample copy;
        rt_error err = fan_out(p, with_phases(sample, ph, &copy), NULL);
        rt_phase_state_carried(p->phases);
        return err;
    }
    double row[RT_NCOLS];
    rt_row_from_sample(sample, row);
    rt_store_keep(row);
    return add_row(p, sample, row, ph);
}

rt_error rt_pipeline_add_record(rt_pipeline *p, const rt_record *caller_rec, size_t rec_size)
{
    rt_record tmp;
    const rt_record *rec = rt_record_at_size(caller_rec, rec_size, &tmp);
    if (!p || !rec || p->finished)
        return RT_ERR_INVALID;
    if (!p->records)
        return RT_OK;
    double row[RT_NCOLS];
    rt_row_from_record(rec, row);
    rt_store_keep(row);
    rt_record kept = *rec; /* its pointers, and process_cpu_secs (a sum of kept figures), as they came */
    rt_row_onto_record(row, &kept);
    if (!kept.job_name)
        kept.job_name = p->job.job_name;
    return fan_out(p, NULL, &kept);
}

void rt_pipeline_finish(rt_pipeline *p, const rt_run_end *end)
{
    if (!p || p->finished)
        return;
    p->finished = true;
    rt_phase_state_end(p->phases);
    rt_run_end e = RT_RUN_END_INIT;
    if (rt_struct_copy(&e, sizeof e, end) < 0) /* too small to read: the defaults */
        e = (rt_run_end)RT_RUN_END_INIT;
    for (size_t i = 0; i < p->n; i++)
        if (p->sinks[i]->ops.finish)
            p->sinks[i]->ops.finish(p->sinks[i]->self, &e);
}

void rt_pipeline_free(rt_pipeline *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        rt_sink_free(p->sinks[i]);
    free(p->sinks);
    free(p->job_block);
    rt_phase_state_free(p->phases);
    free(p);
}

rt_error rt_pipeline_mark(rt_pipeline *p, const rt_phase_mark *m)
{
    if (!p || !m || p->finished)
        return RT_ERR_INVALID;
    if (!p->phases && !(p->phases = rt_phase_state_new()))
        return RT_ERR_NOMEM;
    return rt_phase_state_mark(p->phases, m);
}

void rt_pipeline_mark_refused(rt_pipeline *p, int why, uint64_t n)
{
    if (!p || n == 0)
        return;
    if (!p->phases && !(p->phases = rt_phase_state_new()))
        return;
    rt_phase_state_refused(p->phases, why, n);
}

rt_error rt_pipeline_phase_counts(const rt_pipeline *p, rt_phase_counts *out, size_t out_size)
{
    if (!p || !out)
        return RT_ERR_INVALID;
    rt_phase_counts c = {0};
    if (p->phases)
        c = *rt_phase_state_counts(p->phases);
    memcpy(out, &c, out_size < sizeof c ? out_size : sizeof c);
    return RT_OK;
}
