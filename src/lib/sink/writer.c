/* writer.c - a sample formatted into a caller's buffer (rt_format_sample), and the writer
 * that sends each sample to a file descriptor with one write(2) (or to the caller's
 * rt_write_fn in one call), the CSV header first; for the Rust tool's JSON line it keeps what
 * that line needs of the samples before (sink.h's rt_rs_state). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "../core/out.h"
#include "sink.h"

size_t rt_format_sample(rt_format format, const rt_sample *sample, const rt_job *job, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_job j = RT_JOB_INIT;
    bool have_job = job && rt_struct_copy(&j, sizeof j, job) == 0;
    if (format == RT_FORMAT_CSV || format == RT_FORMAT_CSV_ENERGY)
        rt_csv_sample(&o, sample, format == RT_FORMAT_CSV_ENERGY);
    else if (format == RT_FORMAT_JSON_RS)
        rt_json_rs_sample(&o, sample, have_job ? &j : NULL, NULL);
    else
        rt_json_sample(&o, sample, have_job ? &j : NULL);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

#define WRITER_MAX (16u << 20)

struct rt_writer {
    rt_format format;
    rt_out out;
    rt_job job;
    bool have_job;
    bool header_done;
    rt_rs_state rs; /* RT_FORMAT_JSON_RS */
    char *buf;
    size_t cap;
};

static rt_error writer_new(rt_format format, rt_out to, const rt_job *job, rt_writer **out);

static bool format_known(rt_format format)
{
    return format == RT_FORMAT_JSON || format == RT_FORMAT_CSV || format == RT_FORMAT_JSON_RS ||
           format == RT_FORMAT_CSV_ENERGY;
}

rt_error rt_writer_new(rt_format format, int fd, const rt_job *job, rt_writer **out)
{
    return writer_new(format, RT_OUT_FD(fd), job, out);
}

rt_error rt_writer_new_cb(rt_format format, rt_write_fn write, void *user, const rt_job *job, rt_writer **out)
{
    if (!write) {
        rt_err_set("rt_writer_new_cb: write is NULL");
        if (out)
            *out = NULL;
        return RT_ERR_INVALID;
    }
    return writer_new(format, RT_OUT_CB(write, user), job, out);
}

static rt_error writer_new(rt_format format, rt_out to, const rt_job *job, rt_writer **out)
{
    rt_err_clear();
    *out = NULL;
    rt_job j = RT_JOB_INIT;
    if (!rt_out_ok(&to) || !format_known(format) ||
        rt_struct_copy(&j, sizeof j, job) < 0) {
        if (!rt_out_ok(&to))
            rt_err_set("rt_writer_new: a negative fd");
        else if (!format_known(format))
            rt_err_set("rt_writer_new: unknown format %d", (int)format);
        else
            rt_err_set("rt_writer_new: rt_job.struct_size too small");
        return RT_ERR_INVALID;
    }
    rt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return RT_ERR_NOMEM;
    w->format = format;
    w->out = to;
    w->job = j;
    w->have_job = job != NULL;
    rt_json_rs_start(&w->rs);
    w->cap = 8192;
    w->buf = malloc(w->cap);
    if (!w->buf) {
        free(w);
        return RT_ERR_NOMEM;
    }
    *out = w;
    return RT_OK;
}

rt_error rt_writer_write(rt_writer *w, const rt_sample *sample)
{
    for (;;) {
        rt_ob o = {.buf = w->buf, .cap = w->cap};
        if (w->format == RT_FORMAT_CSV || w->format == RT_FORMAT_CSV_ENERGY) {
            if (!w->header_done)
                rt_ob_lit(&o, rt_format_header(w->format));
            rt_csv_sample(&o, sample, w->format == RT_FORMAT_CSV_ENERGY);
        } else if (w->format == RT_FORMAT_JSON_RS) {
            rt_json_rs_sample(&o, sample, w->have_job ? &w->job : NULL, &w->rs);
        } else {
            rt_json_sample(&o, sample, w->have_job ? &w->job : NULL);
        }
        if (o.len <= w->cap) {
            rt_error e = rt_out_write(&w->out, w->buf, o.len) == 0 ? RT_OK : RT_ERR_IO;
            if (e == RT_OK)
                w->header_done = true;
            if (e == RT_OK && w->format == RT_FORMAT_JSON_RS)
                rt_json_rs_next(&w->rs, sample);
            return e;
        }
        if (o.len > WRITER_MAX)
            return RT_ERR_NOMEM;
        char *nb = realloc(w->buf, o.len + 1024);
        if (!nb)
            return RT_ERR_NOMEM;
        w->buf = nb;
        w->cap = o.len + 1024;
    }
}

void rt_writer_free(rt_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w);
}
