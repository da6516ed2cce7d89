/* labels.c - the job's metadata and tags as the labels of exported series (labels.h). */
#include <stdlib.h>
#include <string.h>

#include "labels.h"

rt_error rt_labels_from_job(const rt_job *job, rt_labels *out)
{
    memset(out, 0, sizeof *out);
    if (!job)
        return RT_OK;
    size_t nmeta = rt_job_field_count();
    size_t n = 0, bytes = 0;
    for (size_t i = 0; i < nmeta; i++) {
        const char *v = rt_job_field(job, i);
        if (v) {
            n++;
            bytes += strlen(v) + 1;
        }
    }
    for (size_t i = 0; i < job->tag_count; i++) {
        if (!job->tags || !job->tags[i])
            continue;
        n++;
        bytes += strlen(job->tags[i]) + sizeof "tag__"; /* "tag_" + key, NUL; value, NUL */
    }
    if (n == 0)
        return RT_OK;
    char *mem = malloc(n * sizeof(rt_kv) + bytes);
    if (!mem)
        return RT_ERR_NOMEM;
    rt_kv *kv = (rt_kv *)(void *)mem;
    char *p = mem + n * sizeof(rt_kv);
    size_t k = 0;
    for (size_t i = 0; i < nmeta; i++) {
        const char *v = rt_job_field(job, i);
        if (!v)
            continue;
        size_t l = strlen(v) + 1;
        memcpy(p, v, l);
        kv[k].key = rt_job_field_name(i);
        kv[k++].value = p;
        p += l;
    }
    for (size_t i = 0; i < job->tag_count; i++) {
        const char *t = job->tags ? job->tags[i] : NULL;
        if (!t)
            continue;
        const char *eq = strchr(t, '=');
        size_t klen = eq ? (size_t)(eq - t) : strlen(t);
        char *key = p;
        memcpy(p, "tag_", 4);
        for (size_t j = 0; j < klen; j++) {
            char c = t[j];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
            p[4 + j] = ok ? c : '_';
        }
        p[4 + klen] = '\0';
        p += 4 + klen + 1;
        const char *val = eq ? eq + 1 : "";
        size_t vl = strlen(val) + 1;
        memcpy(p, val, vl);
        p += vl;
        size_t at = k;
        for (size_t j = 0; j < k; j++) {
            if (strcmp(kv[j].key, key) == 0) {
                at = j; /* a later tag of the same label replaces the earlier */
                break;
            }
        }
        kv[at].key = key;
        kv[at].value = p - vl;
        if (at == k)
            k++;
    }
    out->kv = kv;
    out->count = k;
    return RT_OK;
}

void rt_labels_free(rt_labels *l)
{
    if (!l)
        return;
    free(l->kv);
    l->kv = NULL;
    l->count = 0;
}
