/* sinks.c - where a tracking run's samples go, built from the settings: the /metrics server
 * (started before the command: a port that cannot be served is a usage error with nothing
 * started), then one pipeline holding the node_exporter textfile, the server, the OTLP exporter,
 * the Sentinel stream, the statistics and the report the run's answers read, and the sample
 * output (through its queue, outq.c), in that order (their ends run in that order too: the exporters' last pushes start
 * before the stream's end waits). A sink that cannot start is a warning: the job runs on. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outq.h"
#include "outshare.h"

int cli_sinks_prom(const cli_options *o, rt_cloud_discovery *cloud, rt_sink **out)
{
    *out = NULL;
    if (!o->prom_on)
        return 0;
    rt_prom_options po = RT_PROM_OPTIONS_INIT;
    po.address = o->prom_addr;
    po.port = o->prom_port;
    po.job = &o->job;
    po.cloud = cloud;
    po.log = cli_log;
    rt_prom_server *srv = NULL;
    rt_error e = rt_prom_start(&po, &srv);
    if (e != RT_OK) {
        int en = errno;
        cli_say("--prometheus: cannot serve on %s port %d: %s", o->prom_addr, o->prom_port,
                e == RT_ERR_IO || e == RT_ERR_SYSTEM ? strerror(en) : rt_strerror(e));
        return -1;
    }
    if (o->prom_port == 0) /* the port the kernel chose: said, or nobody could scrape it */
        cli_say("serving Prometheus metrics at http://%s%s%s:%d/metrics", strchr(o->prom_addr, ':') ? "[" : "",
                o->prom_addr, strchr(o->prom_addr, ':') ? "]" : "", rt_prom_port(srv));
    if (rt_prom_sink_new(srv, out) != RT_OK) /* it freed the server */
        cli_say("warning: out of memory: no Prometheus metrics for this run");
    return 0;
}

/* The textfile's sink (NULL without --prometheus-textfile): the file named after the job, else
 * the command, else "system"; rewritten at most every interval or 5 s, whichever is longer. */
static rt_sink *textfile_sink(const cli_options *o, double start_secs)
{
    if (!o->textfile_dir)
        return NULL;
    const char *name = o->job.job_name;
    if (!name && o->command) {
        const char *slash = strrchr(o->command[0], '/');
        name = slash ? slash + 1 : o->command[0];
    }
    char shown[128];
    snprintf(shown, sizeof shown, "%s", name ? name : "system");
    rt_textfile_options to = RT_TEXTFILE_OPTIONS_INIT;
    to.dir = o->textfile_dir;
    to.name = shown;
    to.job = &o->job;
    to.every_secs = o->interval > 5.0 ? o->interval : 5.0;
    to.start_secs = start_secs;
    to.label = "--prometheus-textfile";
    to.log = cli_log;
    rt_sink *s = NULL;
    if (rt_textfile_sink_new(&to, &s) != RT_OK)
        cli_say("warning: out of memory: no export for this run");
    return s;
}

/* The OTLP exporter's sink (NULL without --otlp, or when it cannot start: said). */
static rt_sink *otlp_sink(const cli_options *o, const rt_host *host, rt_cloud_discovery *cloud)
{
    if (!o->otlp_url)
        return NULL;
    rt_otlp_options oo = RT_OTLP_OPTIONS_INIT;
    oo.url = o->otlp_url;
    oo.headers = (const char *const *)o->otlp_headers;
    oo.resource = o->otlp_resource.kv;
    oo.resource_count = o->otlp_resource.count;
    oo.interval_secs = o->otlp_interval;
    oo.timeout_secs = o->otlp_timeout;
    oo.no_gzip = o->otlp_no_gzip;
    oo.finish_timeout_secs = o->finish_timeout;
    oo.job = &o->job;
    oo.command = (const char *const *)o->command;
    oo.host = host;
    oo.cloud = cloud;
    oo.log = cli_log;
    rt_otlp *ex = NULL;
    rt_error e = rt_otlp_start(&oo, &ex);
    if (e == RT_ERR_SYSTEM)
        cli_say("warning: not pushing OTLP metrics: cannot start its thread (%s)", strerror(errno));
    else if (e != RT_OK)
        cli_say("warning: not pushing OTLP metrics: %s", rt_strerror(e));
    rt_sink *s = NULL;
    if (e == RT_OK && rt_otlp_sink_new(ex, &s) != RT_OK)
        cli_say("warning: out of memory: not pushing OTLP metrics");
    return s;
}

void cli_stream_options(const cli_options *o, rt_stream_options *so)
{
    so->api_url = o->sentinel_url;
    so->token = o->sentinel_token;
    so->finish_timeout_secs = o->finish_timeout;
    so->s3_endpoint_url = o->s3_endpoint;
    so->region = o->aws_region;
    so->spill_dir = o->spill_dir;
    so->spill_fallback_dir = o->spill_fallback;
    so->csv_energy = o->csv_energy;
    so->log = cli_log;
}

/* The stream's sink (only with a token), with the host's facts (may be NULL); the cloud's
 * result is asked by the stream itself before it registers. NULL when it cannot start (one
 * warning: the job goes on untouched). */
static rt_sink *stream_sink(const cli_options *o, const rt_host *host, rt_cloud_discovery *cloud)
{
    if (!o->sentinel_token)
        return NULL;
    rt_stream_options so = RT_STREAM_OPTIONS_INIT;
    cli_stream_options(o, &so);
    so.upload_interval_secs = o->upload_interval;
    so.job = &o->job;
    so.command = (const char *const *)o->command;
    so.host = host;
    so.cloud = cloud;
    rt_stream *st = NULL;
    rt_error err = rt_stream_start(&so, &st); /* it copies what it needs of the host */
    if (err == RT_ERR_SYSTEM) {
        cli_say("warning: not streaming to the Sentinel API: cannot start its thread (%s)", strerror(errno));
        return NULL;
    }
    if (err != RT_OK) {
        cli_say("warning: not streaming to the Sentinel API: %s", rt_strerror(err));
        return NULL;
    }
    rt_stream_deliver_earlier(st); /* older runs left in the spill directory go once the API answers */
    rt_sink *s = NULL;
    if (rt_stream_sink_new(st, &s) != RT_OK)
        cli_say("warning: out of memory: not streaming to the Sentinel API");
    return s;
}

/* The sample output's sink (NULL with --quiet, or when it cannot be set up: said): each sample
 * goes through the run's output queue (outq.c), which its own thread writes, so a reader that
 * stalls never holds up sampling. Without that thread, straight to the descriptor (one warning). */
static rt_sink *writer_sink(const cli_options *o, int out_fd)
{
    if (out_fd < 0)
        return NULL;
    rt_writer *w = NULL;
    rt_error err;
    rt_format f = o->format == RT_FORMAT_CSV && o->csv_energy ? RT_FORMAT_CSV_ENERGY : o->format;
    cli_outq *q = cli_outq_new(out_fd, 0, 0);
    if (q) {
        /* a file another tracker may write too gets the CSV header only when it is empty */
        cli_outshare_header(o->output && strcmp(o->output, "-") != 0 ? out_fd : -1, f);
        err = rt_writer_new_cb(f, cli_outshare_write, q, &o->job, &w);
        if (err == RT_OK)
            cli_outq_run_set(q, cli_outq_is_stderr(out_fd)); /* cli_outq_run_end frees it */
        else
            cli_outq_free(q);
    } else {
        cli_say("warning: cannot start the output's thread (%s): a reader that stalls holds up sampling",
                strerror(errno));
        err = rt_writer_new(f, out_fd, &o->job, &w);
    }
    rt_sink *s = NULL;
    if (err == RT_OK)
        err = rt_writer_sink_new(w, &s);
    if (err != RT_OK)
        cli_say("cannot set up output: %s", rt_strerror(err));
    return s;
}

rt_pipeline *cli_sinks_pipeline(const cli_options *o, const cli_run_sinks *in)
{
    rt_pipeline *p = NULL;
    if (rt_pipeline_new(&o->job, &p) != RT_OK) {
        cli_say("warning: out of memory: samples go nowhere in this run");
        rt_sink_free(in->prom);
        return NULL;
    }
    rt_sink *stats = NULL, *report = NULL;
    if (in->stats)
        rt_stats_sink_new(in->stats, &stats);
    if (in->report)
        rt_report_sink_new(in->report, &report);
    rt_sink *sinks[] = {textfile_sink(o, in->start_secs), in->prom, otlp_sink(o, in->host, in->cloud),
                        stream_sink(o, in->host, in->cloud), stats, report, writer_sink(o, in->out_fd)};
    for (size_t i = 0; i < sizeof sinks / sizeof sinks[0]; i++)
        if (sinks[i] && rt_pipeline_attach(p, sinks[i]) != RT_OK)
            cli_say("warning: out of memory: a part of this run's output is missing");
    rt_pipeline_set_host(p, in->host, NULL);
    return p;
}
