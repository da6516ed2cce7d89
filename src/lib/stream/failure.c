/* failure.c - a stream's last failure (rt_stream_errmsg): the words its thread, a spill or a
 * later delivery kept of what they could not do, with every secret the stream holds (the token,
 * the S3 keys) taken out. Below uploader.c, spill.c and deliver.c alike: it calls none of them. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>

#include "stream_int.h"

void rt_stream_redact(const rt_stream *st, char *msg)
{
    rt_redact(msg, st->token);
    rt_redact(msg, st->creds.secret_key);
    rt_redact(msg, st->creds.session_token);
    rt_redact(msg, st->creds.access_key);
}

void rt_stream_failed(rt_stream *st, const char *fmt, ...)
{
    char msg[sizeof st->err.msg];
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    rt_stream_redact(st, msg);
    rt_handle_err_set(&st->err, &st->mu, "%s", msg);
}

const char *rt_stream_errmsg(rt_stream *st)
{
    return st ? rt_handle_err_get(&st->err, &st->mu) : "";
}
