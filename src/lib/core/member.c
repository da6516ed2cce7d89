/* member.c - copies of an rt_member that own their strings (member.h). */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "member.h"

int rt_member_keep(rt_member_copy *dst, const rt_member *src)
{
    memset(dst, 0, sizeof *dst);
    rt_member clear = RT_MEMBER_INIT;
    dst->m = clear;
    /* the copy's struct_size: its own */
    int got = rt_struct_copy_least(&dst->m, sizeof dst->m, src, offsetof(rt_member, from) + sizeof(const char *));
    if (got <= 0)
        return got;
    rt_member *m = &dst->m;
    m->job_id = rt_copy_cut_said(dst->job_id, sizeof dst->job_id, m->job_id);
    m->step_id = rt_copy_cut_said(dst->step_id, sizeof dst->step_id, m->step_id);
    m->node = rt_copy_cut_said(dst->node, sizeof dst->node, m->node);
    m->from = rt_copy_cut_said(dst->from, sizeof dst->from, m->from);
    int64_t *nums[] = {&m->rank, &m->local_rank, &m->ranks, &m->nodes, &m->node_index};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (*nums[i] < -1)
            *nums[i] = -1;
    dst->set = m->job_id != NULL;
    return 0;
}
