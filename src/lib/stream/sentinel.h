/* sentinel.h - the Sentinel API of docs/contracts.md §5 as pure functions: the JSON bodies the
 * tracker sends and the replies it reads. No I/O here (the uploader in stream.c does the
 * calls). Internal to the library. */
#ifndef RT_SENTINEL_H
#define RT_SENTINEL_H

#include "../core/core.h"
#include "../net/s3.h"

/* What POST /runs says about the run. Any pointer may be NULL (then its fields are left out). */
typedef struct rt_sentinel_run {
    const rt_job *job;           /* metadata fields and tags ("k=v" list) */
    const char *const *command;  /* the wrapped argv, NULL-terminated: sent as a JSON array
                                  * encoded in a string */
    const rt_host *host;         /* host_* fields */
    const rt_cloud *cloud;       /* cloud_* fields */
    const char *allocation;      /* host_server_allocation: "dedicated"/"shared", or NULL */
} rt_sentinel_run;

/* The body of POST /runs (one flat object, absent values left out, no pid), NUL-terminated, into
 * *out (free with rt_buf_free). RT_OK or RT_ERR_NOMEM. */
rt_error rt_sentinel_register_body(const rt_sentinel_run *run, rt_buf *out);

/* Reads the reply of POST /runs: run_id, upload_uri_prefix into target (bucket and prefix) and
 * upload_credentials (expiration or expires_at, ISO 8601) into creds. Returns true, or false for
 * a reply without them (err says what was missing, never a secret). */
bool rt_sentinel_parse_register(const char *buf, size_t len, char *run_id, size_t run_id_cap, rt_s3_target *target,
                                rt_s3_credentials *creds, char *err, size_t errlen);

/* Reads the reply of POST /runs/{run_id}/refresh-credentials ({upload_credentials}). */
bool rt_sentinel_parse_refresh(const char *buf, size_t len, rt_s3_credentials *creds, char *err, size_t errlen);

/* Reads the reply of POST /runs/{run_id}/finish: true for a whole JSON object; false for
 * anything else (empty, cut short, not JSON), with err saying which. Pure. */
bool rt_sentinel_parse_finish(const char *buf, size_t len, char *err, size_t errlen);

/* The body of POST /runs/{run_id}/finish: exit_code, run_status ("finished" for 0 or a clean
 * stop, "failed" otherwise), finished_at (YYYY-MM-DDTHH:MM:SSZ from finished_unix), and either
 * data_source "s3" + data_uris (n URIs) or, when n is 0, data_source "inline" + data_csv (the
 * raw CSV text, csv_len bytes). No run_id in the body. RT_OK or RT_ERR_NOMEM. */
rt_error rt_sentinel_finish_body(int exit_code, bool failed, double finished_unix, const char *const *uris, size_t n,
                                 const char *csv, size_t csv_len, rt_buf *out);

/* An ISO 8601 time ("2026-11-22T10:00:00Z", with fractions or an offset) as Unix seconds; NaN
 * when it is not one. Pure. */
double rt_iso8601_parse(const char *s);

#endif
