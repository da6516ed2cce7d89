/* uploader.c - the network work of a stream's thread or a later delivery (docs/contracts.md §5):
 * register the run, refresh the S3 credentials, PUT batches with backoff (a damaged spill file
 * skipped), finish the run (every uploaded URI, or all rows inline when none reached S3), and
 * the real network calls (libcurl and the S3 helpers) behind rt_stream_net. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../net/curl.h"
#include "sentinel.h"
#include "stream_int.h"

#define REFRESH_AHEAD_SECS 300.0 /* credentials are refreshed when they expire within this */
#define INLINE_MAX (256u << 20)  /* the most raw CSV sent inline */
#define REPLY_MAX (1u << 20)
#define MIN_TIMEOUT 0.05         /* the least time a request is given */

/* The short form of a failure's message into out[cap]: past its first ": " when it names the
 * request first ("PUT URL: HTTP 403 AccessDenied: Access Denied"), up to the next ": " (the
 * status and S3's code, or curl's words). */
static void short_why(const char *msg, bool named, char *out, size_t cap)
{
    const char *a = named ? strstr(msg, ": ") : NULL;
    a = a ? a + 2 : msg;
    const char *b = strstr(a, ": ");
    size_t n = b ? (size_t)(b - a) : strlen(a);
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), a);
}

void rt_upload_say_wait(rt_stream *st, const char *on, const char *why, double until)
{
    double left = until - rt_clock_now(st->clock);
    if (st->wait_said || !(left >= 1.0))
        return;
    st->wait_said = true;
    rt_log(&st->lg, RT_LOG_WARN, "stream: waiting up to %.0f s for %s (%s so far); TRACKER_FINISH_TIMEOUT sets it",
           ceil(left), on, why[0] ? why : "no answer");
}

/* Frees a reply that held credentials, wiping it first. */
static void free_secret_reply(rt_buf *reply)
{
    if (reply->data)
        explicit_bzero(reply->data, reply->len);
    rt_buf_free(reply);
}

/* POSTs body to {api_url}{path}. Returns true for a 2xx reply (its body in *reply, which the
 * caller frees), false otherwise with what went wrong in why ("HTTP 503" or curl's words). */
static bool api_post(rt_stream *st, const char *path, const char *idem, const char *body, size_t len, double timeout,
                     rt_buf *reply, char *why, size_t whylen)
{
    char url[2048];
    long status = 0;
    rt_buf_init(reply, REPLY_MAX);
    if (!rt_pathf(url, sizeof url, "%s%s", st->api_url, path)) {
        snprintf(why, whylen, "URL too long");
        return false;
    }
    char err[512] = "";
    rt_error e = st->net.post(st->net.user, url, st->token, idem, body, len, fmax(timeout, MIN_TIMEOUT), &status, reply,
                              err, sizeof err);
    if (e == RT_OK && status >= 200 && status < 300)
        return true;
    if (e == RT_OK)
        snprintf(why, whylen, "HTTP %ld", status);
    else
        snprintf(why, whylen, "%s", err[0] ? err : rt_strerror(e));
    rt_stream_redact(st, why);
    return false;
}

rt_error rt_upload_register_body(rt_stream *st, double cloud_wait, rt_buf *out)
{
    memset(out, 0, sizeof *out);
    if (st->reg_body) { /* a delivered run's, as it was recorded */
        rt_buf_init(out, strlen(st->reg_body) + 4096);
        if (rt_buf_append(out, st->reg_body, strlen(st->reg_body) + 1) < 0)
            return RT_ERR_NOMEM;
        out->len--;
        return RT_OK;
    }
    const rt_cloud *cloud = st->cloud ? rt_cloud_result(st->cloud, cloud_wait) : NULL;
    pthread_mutex_lock(&st->mu);
    const char *guess = rt_allocation_guess(&st->alloc);
    pthread_mutex_unlock(&st->mu);
    rt_sentinel_run run = {.job = &st->job,
                           .command = (const char *const *)st->command,
                           .host = st->have_host ? &st->host : NULL,
                           .cloud = cloud,
                           .allocation = guess ? guess : (st->have_host ? st->host.allocation : NULL)};
    return rt_sentinel_register_body(&run, out);
}

/* Registers the run (POST /runs), after the cloud's result (within its 2 s from the start) and
 * with the dedicated/shared guess from the samples so far. On success learns the bucket's
 * region when none was given. Failures are warned about once and retried with backoff. */
void rt_upload_register(rt_stream *st, double timeout)
{
    double until = rt_clock_now(st->clock) + timeout; /* the cloud wait, POST and region ask all within it */
    double waited = rt_clock_now(st->clock) - st->t0;
    rt_buf body = {0}, reply = {0};
    char why[600] = "";
    bool ok = false;
    if (rt_upload_register_body(st, waited < 2.0 ? fmin(2.0 - waited, timeout / 2) : 0.0, &body) != RT_OK) {
        snprintf(why, sizeof why, "out of memory");
    } else if (api_post(st, "/runs", st->local_key, body.data, body.len, until - rt_clock_now(st->clock), &reply, why,
                        sizeof why)) { /* the run's key: a try whose reply was lost gives the same run again */
        char perr[256] = "";
        rt_s3_target t;
        memset(&t, 0, sizeof t);
        ok = rt_sentinel_parse_register(reply.data ? reply.data : "", reply.len, st->run_id, sizeof st->run_id, &t,
                                        &st->creds, perr, sizeof perr);
        if (ok) {
            rt_copy_str(t.endpoint, sizeof t.endpoint, st->endpoint ? st->endpoint : "");
            rt_copy_str(t.region, sizeof t.region, st->region ? st->region : "");
            st->target = t;
        } else {
            snprintf(why, sizeof why, "unexpected reply: %s", perr);
        }
    }
    rt_buf_free(&body);
    free_secret_reply(&reply);
    if (ok) {
        pthread_mutex_lock(&st->mu);
        st->registered = true; /* rt_stream_add stops feeding the allocation guess */
        pthread_mutex_unlock(&st->mu);
        rt_log(&st->lg, RT_LOG_INFO, "stream: registered run %s", st->run_id);
        double left = fmin(until - rt_clock_now(st->clock), st->net_timeout);
        if (!st->target.region[0] && left >= MIN_TIMEOUT) {
            st->net.find_region(st->net.user, &st->target, &st->creds, left);
        }
        if (!st->target.region[0])
            rt_copy_str(st->target.region, sizeof st->target.region, "eu-central-1");
        if (st->reg_tries > 0 && !st->delivering)
            rt_log(&st->lg, RT_LOG_WARN, "stream: the run is registered now (run %s)", st->run_id);
        if (st->record_on)
            rt_record_save(st); /* before any PUT: a later delivery must not register it again */
        return;
    }
    rt_stream_failed(st, "cannot register the run at the Sentinel API (%s)", why);
    short_why(why, false, st->api_why, sizeof st->api_why);
    st->reg_tries++;
    st->reg_next = rt_clock_now(st->clock) + ldexp(1.0, (int)st->reg_tries);
    if (st->reg_tries == 1)
        rt_log(&st->lg, RT_LOG_WARN,
               "stream: cannot register the run at the Sentinel API (%s); tracking goes on, batches are kept in %s "
               "and registration is retried",
               why, st->spill_dir);
    else
        rt_log(&st->lg, RT_LOG_INFO, "stream: registration try %u failed (%s)", st->reg_tries, why);
}

/* Refreshes the credentials when they expire within 300 s (not more often than every upload
 * interval or 30 s). A failure is warned about once; the old credentials are used meanwhile. */
static void refresh_if_needed(rt_stream *st, double timeout)
{
    double left = st->creds.expires_unix - rt_real_secs();
    if (!(left < REFRESH_AHEAD_SECS) || rt_clock_now(st->clock) < st->refresh_next)
        return;
    char path[512], why[600] = "";
    rt_buf reply = {0};
    bool ok = false;
    if (rt_pathf(path, sizeof path, "/runs/%s/refresh-credentials", st->run_id) &&
        api_post(st, path, NULL, NULL, 0, timeout, &reply, why, sizeof why)) {
        rt_s3_credentials c;
        memset(&c, 0, sizeof c);
        char perr[256] = "";
        ok = rt_sentinel_parse_refresh(reply.data ? reply.data : "", reply.len, &c, perr, sizeof perr);
        if (ok)
            st->creds = c;
        else
            snprintf(why, sizeof why, "unexpected reply: %s", perr);
        explicit_bzero(&c, sizeof c);
    }
    free_secret_reply(&reply);
    st->refresh_next = rt_clock_now(st->clock) + fmax(fmin(st->interval, 30), 1);
    if (ok) {
        rt_log(&st->lg, RT_LOG_INFO, "stream: upload credentials refreshed");
        st->refresh_warned = false;
        return;
    }
    rt_stream_failed(st, "cannot refresh the upload credentials (%s)", why);
    if (!st->refresh_warned) {
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot refresh the upload credentials (%s)", why);
        st->refresh_warned = true;
    }
}

/* Remembers the s3:// URI of an uploaded key (relative to the target's prefix). Returns false on
 * no memory. */
bool rt_upload_add_uri(rt_stream *st, const char *key)
{
    char uri[2048];
    if (!rt_s3_object_uri(&st->target, key, uri, sizeof uri))
        return false;
    if (st->nuris == st->cap_uris && rt_grow(&st->uris, &st->cap_uris, st->nuris + 1, sizeof *st->uris) < 0)
        return false;
    if (!(st->uris[st->nuris] = rt_strdup(uri)))
        return false;
    st->nuris++;
    return true;
}

/* Skips b, the oldest pending batch, whose spill file is missing or damaged (and not in memory):
 * one warning naming the file, counted, the file moved aside to NAME.damaged (kept for a look,
 * never read again), so that the batches behind it go on. */
static void skip_damaged(rt_stream *st, rt_batch *b)
{
    char aside[4200];
    bool moved = b->spill && rt_pathf(aside, sizeof aside, "%s.damaged", b->spill) && rename(b->spill, aside) == 0;
    rt_log(&st->lg, RT_LOG_WARN, "stream: spill file %s is missing or damaged; its batch (%zu rows) is skipped%s",
           b->spill ? b->spill : "(none)", b->rows, moved ? " and kept as .damaged" : "");
    rt_stream_failed(st, "spill file %s is missing or damaged", b->spill ? b->spill : "(none)");
    pthread_mutex_lock(&st->mu);
    st->damaged++;
    st->damaged_rows += b->rows;
    pthread_mutex_unlock(&st->mu);
    free(b->spill);
    b->spill = NULL; /* moved or gone: rt_spill_drop removes nothing */
    b->rows = 0;     /* counted as damaged, not as unsent */
}

/* PUTs the oldest pending batch as {run_id}/{seq:06d}.csv.gz under the target's prefix, seq being
 * the count of objects uploaded so far (uploads go one at a time, oldest first, so the keys run
 * 000000.. without a gap even when a damaged batch was skipped; a PUT retried after a lost reply
 * writes the same key again). Returns true when it was uploaded (and dropped) or skipped as
 * damaged; false after a failure (its tries counted, the first failure of a row of them warned
 * about). */
static bool upload_oldest(rt_stream *st, double timeout)
{
    rt_batch *b = st->pending;
    double until = rt_clock_now(st->clock) + timeout; /* the refresh and the PUT both within it */
    refresh_if_needed(st, timeout);
    char key[1400], err[512] = "";
    rt_buf tmp;
    const void *data;
    size_t len;
    long status = 0;
    rt_error e = RT_ERR_IO;
    if (!rt_pathf(key, sizeof key, "%s/%06zu.csv.gz", st->run_id, st->nuris)) {
        snprintf(err, sizeof err, "object key too long");
    } else if (!rt_spill_read(b, &tmp, &data, &len)) {
        rt_buf_free(&tmp);
        skip_damaged(st, b);
        st->done_seq = b->seq;
        if (st->record_on)
            rt_record_save(st);
        rt_spill_drop(st, rt_batch_pop(st));
        return true;
    } else {
        e = st->net.put(st->net.user, &st->target, &st->creds, key, data, len, fmax(until - rt_clock_now(st->clock), MIN_TIMEOUT), &status,
                        err, sizeof err);
        rt_buf_free(&tmp);
    }
    if (e == RT_OK) {
        if (!rt_upload_add_uri(st, key))
            rt_log(&st->lg, RT_LOG_ERROR, "stream: out of memory remembering %s", key);
        st->done_seq = b->seq;
        if (st->record_on) /* the record says it went before its spill file goes */
            rt_record_save(st);
        rt_spill_drop(st, rt_batch_pop(st));
        pthread_mutex_lock(&st->mu);
        st->uploaded++;
        pthread_mutex_unlock(&st->mu);
        if (st->s3_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: uploads to S3 work again");
        st->s3_warned = false;
        return true;
    }
    b->tries++;
    if (status == 0 && e != RT_ERR_INVALID && e != RT_ERR_NOMEM && e != RT_ERR_UNSUPPORTED)
        b->doubt = true; /* sent and never answered: it may land yet (the next try writes the same key) */
    if (b->doubt && st->record_on)
        rt_record_save(st); /* a later delivery must know: never inline */
    rt_stream_redact(st, err);
    short_why(err, strncmp(err, "PUT ", 4) == 0, st->s3_why, sizeof st->s3_why);
    if (status > 0)
        rt_stream_failed(st, "upload of batch %06u failed (HTTP %ld: %s)", b->seq, status, err);
    else
        rt_stream_failed(st, "upload of batch %06u failed (%s)", b->seq, err);
    if (!st->s3_warned) {
        if (status > 0)
            rt_log(&st->lg, RT_LOG_WARN, "stream: upload of batch %06u failed (HTTP %ld: %s); retrying", b->seq,
                   status, err);
        else
            rt_log(&st->lg, RT_LOG_WARN, "stream: upload of batch %06u failed (%s); retrying", b->seq, err);
    }
    st->s3_warned = true;
    return false;
}

/* Uploads pending batches, oldest first, while S3 takes them and until `until` (monotonic);
 * after a failure the next try waits with doubling backoff (from backoff_min up to backoff_max). */
void rt_upload_pending(rt_stream *st, double until, double backoff_min, double backoff_max)
{
    while (st->pending) {
        double now = rt_clock_now(st->clock);
        if (now >= until || now < st->s3_next)
            return;
        if (upload_oldest(st, fmin(until - now, st->net_timeout))) {
            st->s3_backoff = 0;
            continue;
        }
        st->s3_backoff = st->s3_backoff > 0 ? fmin(st->s3_backoff * 2, backoff_max) : fmin(backoff_min, backoff_max);
        st->s3_next = rt_clock_now(st->clock) + st->s3_backoff;
        return;
    }
}

/* The CSV of the pending batches (header once) into *out (NUL-terminated; the caller frees it).
 * A batch that cannot be read back (its spill file missing or damaged) is skipped with a warning
 * and counted (dropped with the rest once the inline rows were taken). Returns true, or false
 * when the whole is too large or memory runs out. */
static bool inline_csv(rt_stream *st, rt_buf *out)
{
    const char *hdr = rt_format_header(st->csv_format);
    rt_buf_init(out, INLINE_MAX);
    if (rt_buf_append(out, hdr, strlen(hdr)) < 0)
        return false;
    for (rt_batch *b = st->pending; b; b = b->next) {
        rt_buf tmp, raw = {0};
        const void *data;
        size_t len;
        bool ok = rt_spill_read(b, &tmp, &data, &len) && rt_gunzip(data, len, INLINE_MAX, &raw) == RT_OK;
        rt_buf_free(&tmp);
        const char *rows = ok ? memchr(raw.data, '\n', raw.len) : NULL; /* after the header */
        if (!rows) {
            rt_buf_free(&raw);
            skip_damaged(st, b);
            continue;
        }
        ok = rt_buf_append(out, rows + 1, raw.len - (size_t)(rows + 1 - raw.data)) == 0;
        rt_buf_free(&raw);
        if (!ok)
            return false;
    }
    return rt_buf_append(out, "", 1) == 0 && (out->len--, true); /* NUL-terminated */
}

/* POST /runs/{id}/finish as the Python tracker 0.5 sends it: data_source "s3" with the URI of
 * every uploaded object whenever any batch reached S3 (the batches still pending stay, to be
 * spilled and delivered later under the same run), else "inline" with the rows of every
 * batch. Returns true when the API took it (inline batches are then dropped); false with one
 * warning. */
bool rt_upload_finish(rt_stream *st, int exit_code, bool failed, double finished_unix, double timeout)
{
    if (st->pending && st->pending->doubt) {
        /* the finish would name the objects, or send the rows inline, without it: wait until a
         * PUT of it is answered (a later delivery), so that its rows arrive once */
        rt_stream_failed(st, "the upload of batch %06u got no reply and may still land", st->pending->seq);
        rt_log(&st->lg, RT_LOG_WARN, "stream: the upload of batch %06u got no reply and may still land; the run is "
               "finished once an upload of it is answered (a later delivery: `resource-tracker upload`)",
               st->pending->seq);
        return false;
    }
    rt_buf csv = {0}, body = {0}, reply = {0};
    char path[512], why[600] = "";
    bool inl = st->nuris == 0;
    bool ok = !inl || inline_csv(st, &csv);
    if (!ok)
        snprintf(why, sizeof why, "cannot gather the rows to send inline");
    else if (rt_sentinel_finish_body(exit_code, failed, finished_unix, (const char *const *)st->uris,
                                     inl ? 0 : st->nuris, inl ? csv.data : NULL, inl ? csv.len : 0, &body) != RT_OK)
        ok = false, snprintf(why, sizeof why, "out of memory");
    rt_buf_free(&csv);
    ok = ok && rt_pathf(path, sizeof path, "/runs/%s/finish", st->run_id) &&
         api_post(st, path, NULL, body.data, body.len, timeout, &reply, why, sizeof why);
    char perr[256] = "";
    if (ok && !rt_sentinel_parse_finish(reply.data, reply.len, perr, sizeof perr)) {
        /* a 200 whose body is not the reply (cut short, a proxy's page): not known to be taken,
         * so kept for a later delivery, whose finish a taken one answers 409 */
        ok = false;
        snprintf(why, sizeof why, "HTTP 200 with an unexpected reply: %s", perr);
    }
    rt_buf_free(&body);
    rt_buf_free(&reply);
    if (!ok && strcmp(why, "HTTP 409") == 0 && st->delivering) {
        /* a delivery cut short after the API took its finish: the run is finished there */
        rt_log(&st->lg, RT_LOG_INFO, "stream: run %s was finished already", st->run_id);
        ok = true;
    }
    if (!ok) {
        rt_stream_failed(st, "cannot finish the run at the Sentinel API (%s)", why);
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot finish the run at the Sentinel API (%s)", why);
        return false;
    }
    rt_log(&st->lg, RT_LOG_INFO, "stream: run %s finished (%s)", st->run_id, inl ? "data inline" : "data in S3");
    st->finish_sent = true;
    if (inl && st->pending_tail)
        st->done_seq = st->pending_tail->seq; /* sent: the record says so before the files go */
    if (st->record_on)
        rt_record_save(st);
    while (inl && st->pending)
        rt_spill_drop(st, rt_batch_pop(st));
    return true;
}

/* ---- the real network --------------------------------------------------------------------------- */

/* rt_stream_net.post through libcurl (rt_fetch); the Authorization header is wiped after use. */
static rt_error real_post(void *user, const char *url, const char *token, const char *idem, const char *body,
                          size_t len, double timeout, long *status, rt_buf *reply, char *err, size_t errlen)
{
    (void)user;
    size_t alen = strlen(token) + sizeof "Authorization: Bearer ";
    char *auth = malloc(alen), key[128];
    if (!auth)
        return RT_ERR_NOMEM;
    snprintf(auth, alen, "Authorization: Bearer %s", token);
    bool with_key = idem && rt_pathf(key, sizeof key, "Idempotency-Key: %s", idem);
    const char *headers[] = {auth, "Content-Type: application/json", "Accept: application/json", with_key ? key : NULL,
                             NULL};
    rt_fetch_request rq = {.method = "POST", .url = url, .headers = headers, .body = body ? body : "",
                           .body_len = body ? len : 0, .timeout_secs = timeout, .max_body = REPLY_MAX};
    rt_fetch_reply rp;
    rt_error e = rt_fetch(&rq, &rp, err, errlen);
    explicit_bzero(auth, alen);
    free(auth);
    *status = rp.status;
    rt_buf_free(reply);
    *reply = rp.body;
    memset(&rp.body, 0, sizeof rp.body);
    rt_fetch_reply_free(&rp);
    return e;
}

static rt_error real_put(void *user, const rt_s3_target *t, const rt_s3_credentials *c, const char *key,
                         const void *body, size_t len, double timeout, long *status, char *err, size_t errlen)
{
    (void)user;
    return rt_s3_put(t, c, key, body, len, "application/gzip", timeout, status, err, errlen);
}

static void real_find_region(void *user, rt_s3_target *t, const rt_s3_credentials *c, double timeout)
{
    (void)user;
    rt_s3_find_region(t, c, timeout);
}

const rt_stream_net rt_stream_real_net = {.post = real_post, .put = real_put, .find_region = real_find_region};
