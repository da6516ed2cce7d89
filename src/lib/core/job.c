/* job.c - the job's metadata fields by number (names, values, the report's words) and the one
 * deep copy of an rt_job (job.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "job.h"

#define X_OFF(m, word) offsetof(rt_job, m),
#define X_NAME(m, word) #m,
#define X_WORD(m, word) word,
static const size_t field_off[] = {RT_JOB_FIELDS(X_OFF)};
static const char *const field_name[] = {RT_JOB_FIELDS(X_NAME)};
static const char *const field_word[] = {RT_JOB_FIELDS(X_WORD)};
_Static_assert(RT_ARRAY_LEN(field_off) == RT_JOB_NFIELDS, "RT_JOB_NFIELDS is the count of RT_JOB_FIELDS");

size_t rt_job_field_count(void)
{
    return RT_JOB_NFIELDS;
}

const char *rt_job_field_name(size_t i)
{
    return i < RT_JOB_NFIELDS ? field_name[i] : NULL;
}

const char *rt_job_field_word(size_t i)
{
    return i < RT_JOB_NFIELDS ? field_word[i] : NULL;
}

const char *rt_job_field(const rt_job *job, size_t i)
{
    if (!job || i >= RT_JOB_NFIELDS || job->struct_size < field_off[i] + sizeof(const char *))
        return NULL;
    return *(const char *const *)(const void *)((const char *)job + field_off[i]);
}

rt_error rt_job_dup(const rt_job *src, rt_job *out, void **block)
{
    rt_job j = RT_JOB_INIT;
    if (rt_struct_copy(&j, sizeof j, src) < 0)
        return RT_ERR_INVALID;
    size_t ntags = j.tags ? j.tag_count : 0;
    size_t len = 0, kept = 0;
    for (size_t f = 0; f < RT_JOB_NFIELDS; f++) {
        const char *s = rt_job_field(&j, f);
        len += s ? strlen(s) + 1 : 0;
    }
    for (size_t i = 0; i < ntags; i++)
        if (j.tags[i]) {
            len += strlen(j.tags[i]) + 1;
            kept++;
        }
    /* the tag array first (aligned for pointers), then the strings; one slot more than the
     * tags, so a job without tags still gets a block */
    char *mem = malloc((kept + 1) * sizeof(const char *) + len);
    if (!mem)
        return RT_ERR_NOMEM;
    const char **tags = (const char **)(void *)mem;
    char *w = mem + (kept + 1) * sizeof(const char *);
    for (size_t f = 0; f < RT_JOB_NFIELDS; f++) {
        const char **slot = (const char **)(void *)((char *)&j + field_off[f]);
        if (*slot) {
            size_t n = strlen(*slot) + 1;
            memcpy(w, *slot, n);
            *slot = w;
            w += n;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < ntags; i++)
        if (j.tags[i]) {
            size_t n = strlen(j.tags[i]) + 1;
            memcpy(w, j.tags[i], n);
            tags[k++] = w;
            w += n;
        }
    tags[k] = NULL;
    j.tags = kept ? tags : NULL;
    j.tag_count = kept;
    j.struct_size = sizeof j;
    *out = j;
    *block = mem;
    return RT_OK;
}
