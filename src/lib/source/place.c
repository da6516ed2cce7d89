/* place.c - where the job runs (SLURM, Kubernetes, GitHub Actions) and what it was given there.
 * A placeholder until the detection lands: nothing is found. */
#include <stdlib.h>

#include "../core/core.h"

struct rt_place {
    rt_request req;
    rt_job job;
};

rt_error rt_place_detect(const rt_place_options *opts, rt_place **out)
{
    (void)opts;
    if (!out)
        return RT_ERR_INVALID;
    rt_place *p = calloc(1, sizeof *p);
    if (!p)
        return RT_ERR_NOMEM;
    p->req.struct_size = sizeof p->req;
    p->job.struct_size = sizeof p->job;
    *out = p;
    return RT_OK;
}

const rt_request *rt_place_request(const rt_place *p)
{
    return p ? &p->req : NULL;
}

const rt_job *rt_place_job(const rt_place *p)
{
    return p ? &p->job : NULL;
}

void rt_place_free(rt_place *p)
{
    free(p);
}
