/* resource_tracker/ci_summary.h - a run's summary for CI and workflow engines: Markdown,
 * Snakemake and Nextflow files. Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_CI_SUMMARY_H)
#define RESOURCE_TRACKER_CI_SUMMARY_H

#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a run's summary for CI and workflow engines (experimental) --------------------- */

typedef struct rt_markdown_options {
    size_t struct_size;   /* sizeof(rt_markdown_options) as the caller compiled it */
    int scheduler;        /* rt_scheduler whose words the request line takes */
    size_t chart_points;  /* the most points of the CPU and memory chart; 0: 200 */
    size_t max_bytes;     /* the whole text's bound; past it the chart, then the tables are left
                           * out (the answer is always written); 0: 1 MiB less 4 KiB */
} rt_markdown_options;

#define RT_MARKDOWN_OPTIONS_INIT {.struct_size = sizeof(rt_markdown_options), .scheduler = RT_SCHED_SLURM}

/* Writes the run as GitHub-flavoured Markdown (what $GITHUB_STEP_SUMMARY renders): a heading
 * "### resource-tracker: NAME" (info's title, else the job's name, else the command), the answer
 * (the summary text's lines: used, ask for in opts->scheduler's words, energy, carbon, ran; an
 * efficiency line of rt_summary's *_efficiency_pct with the requested figures and their *_from,
 * a figure left out where it is NaN), a table of the main figures, the recommendation in each
 * scheduler's words (info's, else the run's own), the notes as a list, and Mermaid xychart-beta
 * charts of the job's cores and memory (PSS, else RSS; the machine's without a job) over time
 * from r's buckets, merged to at most chart_points points a chart. Job names, commands and notes
 * are escaped (Markdown, HTML, Mermaid's labels). Past max_bytes the charts, then the tables are
 * left out and a line says so; the answer is always written, even past it. info as
 * rt_report_write (NULL or without samples: the heading and "No samples."); r NULL: no charts.
 * The text is made whole before the first call of write. RT_OK, RT_ERR_INVALID (NULL write, an
 * unknown scheduler, a struct_size too small), RT_ERR_IO, RT_ERR_NOMEM. */
RT_API rt_error rt_report_write_markdown_cb(const rt_report *r, const rt_report_info *info,
                                            const rt_markdown_options *opts, rt_write_fn write, void *user);

/* The formats of workflow engines' own accounting files. */
typedef enum rt_workflow_format {
    RT_WORKFLOW_SNAKEMAKE = 0, /* a `benchmark:` TSV: its header line and one row */
    RT_WORKFLOW_NEXTFLOW = 1,  /* a trace: its header line (Nextflow's field names) and one row */
} rt_workflow_format;

/* Writes s (with run's facts: NULL allowed) in a workflow engine's format, header line
 * included. RT_OK, RT_ERR_INVALID (NULL s or write, an unknown format), RT_ERR_IO. */
RT_API rt_error rt_summary_write_workflow(const rt_summary *s, const rt_run_facts *run, int format,
                                          rt_write_fn write, void *user);

/* ---- a CI run's samples file, gzipped (experimental) ------------------------------------ */

/* Reads in_fd to its end and writes it gzipped to out_fd (neither closed): one gzip member a 4 MiB
 * piece, so memory stays bounded whatever the size; an empty input gives one empty member.
 * What the tool's log view does to its samples file at a CI run's end. Returns RT_OK;
 * RT_ERR_INVALID for a negative descriptor; RT_ERR_UNSUPPORTED when zlib cannot be loaded
 * (nothing written); RT_ERR_IO with errno set when a read or a write failed (out_fd then holds
 * a part); RT_ERR_NOMEM. */
RT_API rt_error rt_gzip_fd(int in_fd, int out_fd);

#ifdef __cplusplus
}
#endif
#endif
