/* summary_workflow.c - a run in workflow engines' accounting formats (Snakemake's benchmark
 * TSV, Nextflow's trace). A placeholder until it lands. */
#include "../core/core.h"

rt_error rt_summary_write_workflow(const rt_summary *s, const rt_run_facts *run, int format, rt_write_fn write,
                                   void *user)
{
    (void)s, (void)run, (void)format, (void)write, (void)user;
    return RT_ERR_UNSUPPORTED;
}
