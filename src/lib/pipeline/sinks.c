/* sinks.c - sinks of the caller's own functions (rt_sink_new), and the library's outputs as
 * sinks: the writer, the Sentinel stream, the /metrics server, the OTLP exporter (its last push
 * on a thread of its own, so that it runs beside the stream's end), the statistics and the
 * report. Each adapter only calls its output's public functions, but the stream's, which hands
 * it the pipeline's record too (stream/stream_add.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "../core/core.h"
#include "../stream/stream_add.h"
#include "pipeline.h"

rt_error rt_sink_new(const rt_sink_ops *ops, void *self, rt_sink **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_sink_ops o = RT_SINK_OPS_INIT;
    if (!ops || rt_struct_copy(&o, sizeof o, ops) < 0 || !o.add)
        return RT_ERR_INVALID;
    rt_sink *s = malloc(sizeof *s);
    if (!s)
        return RT_ERR_NOMEM;
    s->ops = o;
    s->self = self;
    *out = s;
    return RT_OK;
}

/* A sink of the library's own functions over obj; on failure free_obj(obj) (when given). */
static rt_error own_sink(const rt_sink_ops *ops, void *obj, void (*free_obj)(void *), rt_sink **out)
{
    if (out)
        *out = NULL;
    if (!obj || !out) {
        if (obj && free_obj)
            free_obj(obj);
        return RT_ERR_INVALID;
    }
    rt_error e = rt_sink_new(ops, obj, out);
    if (e != RT_OK && free_obj)
        free_obj(obj);
    return e;
}

/* A sink over an adapter of size bytes whose first member is obj's pointer (the other members
 * zeroed), freed by ops->free; on failure obj is freed by free_obj (when given). */
static rt_error adapter_sink(const rt_sink_ops *ops, void *obj, void (*free_obj)(void *), size_t size, rt_sink **out)
{
    void **adapter = obj && out ? calloc(1, size) : NULL;
    if (!adapter) {
        if (out)
            *out = NULL;
        if (obj)
            free_obj(obj);
        return obj && out ? RT_ERR_NOMEM : RT_ERR_INVALID;
    }
    *adapter = obj;
    return own_sink(ops, adapter, ops->free, out);
}

/* ---- the writer ----------------------------------------------------------------------------- */

static rt_error writer_add(void *self, const rt_sample *s, const rt_record *rec)
{
    (void)rec;
    return s ? rt_writer_write(self, s) : RT_OK;
}

static void writer_free(void *self)
{
    rt_writer_free(self);
}

rt_error rt_writer_sink_new(rt_writer *w, rt_sink **out)
{
    static const rt_sink_ops ops = {.struct_size = sizeof ops, .add = writer_add, .free = writer_free};
    return own_sink(&ops, w, writer_free, out);
}

/* ---- the Sentinel stream ---------------------------------------------------------------------- */

/* A row the stream could not keep is counted as lost by the stream itself: the sink goes on. The
 * stream reads the pipeline's record of the sample (a record read back, without a sample, is
 * not streamed). */
static rt_error stream_add(void *self, const rt_sample *s, const rt_record *rec)
{
    if (s)
        rt_stream_add_with(self, s, rec);
    return RT_OK;
}

static rt_error stream_finish(void *self, const rt_run_end *end)
{
    int code = end->exit_status == RT_NULL_I64 ? 0 : (int)end->exit_status;
    return rt_stream_finish(self, code, end->failed);
}

static void stream_free(void *self)
{
    rt_stream_free(self);
}

rt_error rt_stream_sink_new(rt_stream *st, rt_sink **out)
{
    static const rt_sink_ops ops = {
        .struct_size = sizeof ops, .add = stream_add, .finish = stream_finish, .free = stream_free,
        .reads_record = 1};
    return own_sink(&ops, st, stream_free, out);
}

/* ---- the /metrics server --------------------------------------------------------------------- */

typedef struct prom_sink {
    rt_prom_server *srv; /* first (adapter_sink); NULL once the run ended */
} prom_sink;

/* Figures that could not be formatted leave the last ones served: the sink goes on. */
static rt_error prom_add(void *self, const rt_sample *s, const rt_record *rec)
{
    (void)rec;
    prom_sink *ps = self;
    if (s && ps->srv)
        rt_prom_publish(ps->srv, s);
    return RT_OK;
}

static void prom_set_host(void *self, const rt_host *host, const rt_cloud *cloud)
{
    (void)cloud;
    prom_sink *ps = self;
    if (host && ps->srv)
        rt_prom_set_host(ps->srv, host);
}

/* The run is over: nothing more to scrape. */
static rt_error prom_finish(void *self, const rt_run_end *end)
{
    (void)end;
    prom_sink *ps = self;
    rt_prom_free(ps->srv);
    ps->srv = NULL;
    return RT_OK;
}

static void prom_free(void *self)
{
    prom_sink *ps = self;
    rt_prom_free(ps->srv);
    free(ps);
}

static void server_free(void *srv)
{
    rt_prom_free(srv);
}

rt_error rt_prom_sink_new(rt_prom_server *srv, rt_sink **out)
{
    static const rt_sink_ops ops = {.struct_size = sizeof ops,
                                    .add = prom_add,
                                    .set_host = prom_set_host,
                                    .finish = prom_finish,
                                    .free = prom_free};
    return adapter_sink(&ops, srv, server_free, sizeof(prom_sink), out);
}

/* ---- the OTLP exporter ----------------------------------------------------------------------- */

typedef struct otlp_sink {
    rt_otlp *ex;        /* first (adapter_sink) */
    pthread_t finisher; /* the last push, beside the other sinks' ends */
    bool finishing;
} otlp_sink;

/* A sample that could not be queued is one missing point: the sink goes on. */
static rt_error otlp_add(void *self, const rt_sample *s, const rt_record *rec)
{
    (void)rec;
    otlp_sink *os = self;
    if (s)
        rt_otlp_add(os->ex, s);
    return RT_OK;
}

static void *otlp_finisher(void *arg)
{
    otlp_sink *os = arg;
    rt_otlp_finish(os->ex); /* what could not be delivered is said by the exporter */
    return NULL;
}

static rt_error otlp_finish(void *self, const rt_run_end *end)
{
    (void)end;
    otlp_sink *os = self;
    if (pthread_create(&os->finisher, NULL, otlp_finisher, os) == 0)
        os->finishing = true;
    else
        rt_otlp_finish(os->ex); /* no thread: here, within the same bound */
    return RT_OK;
}

static void otlp_free(void *self)
{
    otlp_sink *os = self;
    if (os->finishing)
        pthread_join(os->finisher, NULL);
    rt_otlp_free(os->ex);
    free(os);
}

static void exporter_free(void *ex)
{
    rt_otlp_free(ex);
}

rt_error rt_otlp_sink_new(rt_otlp *ex, rt_sink **out)
{
    static const rt_sink_ops ops = {
        .struct_size = sizeof ops, .add = otlp_add, .finish = otlp_finish, .free = otlp_free};
    return adapter_sink(&ops, ex, exporter_free, sizeof(otlp_sink), out);
}

/* ---- the statistics and the report: the caller's, read after the run -------------------------- */

/* The sink new_fn makes over a caller's obj of type: each record handed to add_sized (the
 * object's rt_*_add_sized) through the callback add_fn; the object stays the caller's. */
#define RECORD_SINK(new_fn, type, add_fn, add_sized)                                                                   \
    static rt_error add_fn(void *self, const rt_sample *s, const rt_record *rec)                                       \
    {                                                                                                                  \
        (void)s;                                                                                                       \
        add_sized(self, rec, sizeof *rec);                                                                             \
        return RT_OK;                                                                                                  \
    }                                                                                                                  \
    rt_error new_fn(type *obj, rt_sink **out)                                                                          \
    {                                                                                                                  \
        static const rt_sink_ops ops = {.struct_size = sizeof ops, .add = add_fn, .reads_record = 1};                  \
        return own_sink(&ops, obj, NULL, out);                                                                         \
    }

RECORD_SINK(rt_stats_sink_new, rt_stats, stats_add, rt_stats_add_sized)
RECORD_SINK(rt_report_sink_new, rt_report, report_add, rt_report_add_sized)
