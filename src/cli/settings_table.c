/* settings_table.c - the rows of the tool's one table of settings (settings.h): every flag,
 * environment variable and config key with the commands that take it, its type, range,
 * default, where it lands in the options, and its --help and man text. Data only: settings.c
 * reads it, settings_help.c writes it out for people. */
#include "settings.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>

/* The range of every interval the tool takes (samples, OTLP pushes, uploads), in seconds. */
#define INTERVAL_MIN 0.01
#define INTERVAL_MAX 86400.0

/* The OTLP pushes' default interval, in seconds (--otlp-interval; OTEL_METRIC_EXPORT_INTERVAL
 * in milliseconds). */
#define OTLP_INTERVAL_DEF 10.0

/* The most seconds a reading is carried (TRACKER_PSS_MAX_AGE, TRACKER_WALK_MAX_AGE). */
#define AGE_MAX 86400.0

/* The most watts (--cpu-tdp) and grams per kWh (--grid-intensity) the tool takes. */
#define WATTS_MAX 10000.0
#define G_PER_KWH_MAX 10000.0

/* Where the grid intensity table is installed (CMakeLists.txt), for the zone's message. */
#ifndef RT_DATA_DIR
#define RT_DATA_DIR "/usr/local/share/resource-tracker"
#endif
#define ZONES_HOW "to list them: grep -v '^#' " RT_DATA_DIR "/grid-intensity.csv | cut -d, -f1"

#define L(m) offsetof(cli_layer, m)
#define M(m) offsetof(cli_options, m)
#define NO CLI_NONE

/* One job metadata setting: --FLAG NAME, TRACKER_VAR, [job] KEY. */
#define META(i, name, var, toml_key)                                                                                   \
    {                                                                                                                  \
        .flag = name, .commands = CLI_CMD_TRACK, .arg = "NAME", .env = var, .section = "job", .key = toml_key,         \
        .type = CLI_T_META, .layer_off = L(meta[i]), .set_off = NO, .merged_off = M(meta[i])                           \
    }

/* A variable read from the environment only, by its own reader (no layer, no flag, no key). */
#define ENV_ONLY(var, t) .env = var, .type = t, .layer_off = NO, .set_off = NO, .merged_off = NO

const cli_setting cli_settings[] = {
    {.flag = "pid",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'p',
     .arg = "PID",
     .section = "job",
     .key = "pid",
     .type = CLI_T_PID,
     .layer_off = L(pid),
     .set_off = L(pid_set),
     .merged_off = M(pid),
     .what = "a process id (a positive integer)",
     .must = "a positive integer (a process id)",
     .help = "root of the process tree to attribute usage to",
     .man = "Root of the process tree to attribute usage to. Cannot be combined with a command.",
     .md_default = "none",
     .md = "root of the process tree to attribute usage to"},
    {.flag = "interval",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'i',
     .arg = "SECS",
     .section = "tracker",
     .key = "interval_secs",
     .type = CLI_T_SECS,
     .min = INTERVAL_MIN,
     .max = INTERVAL_MAX,
     .def = 1,
     .layer_off = L(interval),
     .set_off = L(interval_set),
     .merged_off = M(interval),
     .help = "seconds between samples, {min} to {max} (default {def})",
     .man = "Seconds between samples, 0.01 to 86400, fractions allowed. Default 1.",
     .md_default = "1",
     .md = "seconds between samples; fractional allowed, 0.01 to 86400"},
    {.flag = "config",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'c',
     .arg = "FILE",
     .type = CLI_T_CONFIG,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .help = "TOML config (default resource-tracker.toml; a missing default is ignored;\na missing FILE is an error, a "
             "warning with -f json-rs)",
     .man = "TOML config file. Default \\fIresource-tracker.toml\\fR in the working directory; a missing\n"
            "default file is ignored, a missing named file is an error; with \\fB\\-\\-format json\\-rs\\fR\n"
            "(or \\fBTRACKER_FORMAT=json\\-rs\\fR) the run goes on without it and without a word, as the\n"
            "Rust resource-tracker's does.",
     .md_default = "`resource-tracker.toml`",
     .md = "TOML config; a missing default file is ignored, a missing named file is an error (with `-f json-rs`: "
           "skipped without a word, as the Rust tool runs on)"},
    {.flag = "format",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'f',
     .arg = "FMT",
     .man_arg = "json|csv|json-rs",
     .env = "TRACKER_FORMAT",
     .section = "tracker",
     .key = "format",
     .type = CLI_T_FORMAT,
     .def = RT_FORMAT_JSON,
     .layer_off = L(format),
     .set_off = L(format_set),
     .merged_off = M(format),
     .what = "a format (json, csv or json-rs)",
     .must = "\"json\", \"csv\" or \"json-rs\"",
     .help = "json (one object per line, default), csv, or json-rs (the Rust\nresource-tracker 0.1.14's JSON lines)",
     .man = "Output format (config: \\fB[tracker] format\\fR; environment: \\fBTRACKER_FORMAT\\fR). Default\n"
            "\\fBjson\\fR (JSON lines, each opening with \\fB\"resource-tracker-version\"\\fR). \\fBjson\\-rs\\fR: the "
            "JSON\n"
            "lines of the Rust resource-tracker 0.1.14 (its names, nesting, key order, types and units), for\n"
            "scripts built on that tool.",
     .md_default = "`json`",
     .md = "`json` (one object per line), `csv`, or `json-rs`: the Rust resource-tracker 0.1.14's JSON lines "
           "(docs/output.md; `TRACKER_FORMAT`)"},
    {.flag = "csv-energy",
     .commands = CLI_CMD_TRACK,
     .env = "TRACKER_CSV_ENERGY",
     .section = "tracker",
     .key = "csv_energy",
     .type = CLI_T_BOOL,
     .layer_off = L(csv_energy),
     .set_off = L(csv_energy_set),
     .merged_off = M(csv_energy),
     .help = "add the four energy columns after the 32 of the CSV and of the Sentinel\n"
             "batches (default: the 32 the Python and Rust trackers write; or\n"
             "TRACKER_CSV_ENERGY=1)",
     .man = "Add the four energy columns (system_energy_joules, system_energy_method, process_energy_joules,\n"
            "process_energy_method) after the 32 of the CSV and of the batches streamed to the Sentinel API\n"
            "(config: \\fB[tracker] csv_energy = true\\fR; environment: \\fBTRACKER_CSV_ENERGY=1\\fR). Default:\n"
            "the 32 columns alone, as the Python and Rust trackers write them.",
     .md_default = "off",
     .md = "the four energy columns after the CSV's 32 (and the Sentinel batches'); `TRACKER_CSV_ENERGY=1`"},
    {.flag = "output",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'o',
     .arg = "FILE",
     .env = "TRACKER_OUTPUT",
     .section = "tracker",
     .key = "output",
     .type = CLI_T_FILE,
     .layer_off = L(output),
     .set_off = L(output_set),
     .merged_off = M(output),
     .must = "a file name (or \"-\" for stdout)",
     .help = "write the samples to FILE (- is stdout; a FIFO's reader must be there\n"
             "first); without it, samples go to stderr in the samples view, to a\n"
             "file of their own in the log view and are not kept in the human view\n"
             "(or TRACKER_OUTPUT)",
     .man = "Where samples go: a file (created, or emptied unless another tracker writes it then: that\n"
            "run's lines and this one's are appended each whole), or \\fB\\-\\fR for standard output, in either\n"
            "view, with or without \\fB\\-q\\fR. Without it, samples go to standard error in the samples view,\n"
            "to a file of the run's own in the log view and are not kept in the human view (see\n"
            "\\fB\\-\\-view\\fR). A file that cannot be opened is a\n"
            "usage error, said before anything starts; so is a FIFO that has no reader yet (start the reader\n"
            "first: the tracker never waits to open its output). Environment: \\fBTRACKER_OUTPUT\\fR.",
     .md_default = "stderr (samples view)",
     .md = "where samples go, in every view and with `-q` too; `-` is stdout; without it a file of the run's own in "
           "the log view (`TRACKER_OUTPUT`)"},
    {.flag = "quiet",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'q',
     .env = "TRACKER_QUIET",
     .section = "tracker",
     .key = "quiet",
     .type = CLI_T_BOOL,
     .layer_off = L(quiet),
     .set_off = L(quiet_set),
     .merged_off = M(quiet),
     .help = "nothing on the terminal (no samples, start or status line; the\n"
             "summary only with --summary); -o FILE is still written (or\n"
             "TRACKER_QUIET=true)",
     .man = "Nothing on the terminal: no samples, no start or status line; the summary only with\n"
            "\\fB\\-\\-summary\\fR. A file named with \\fB\\-o\\fR is still written. Environment:\n"
            "\\fBTRACKER_QUIET\\fR=\\fBtrue\\fR or \\fBfalse\\fR (the Rust tool's words; also \\fB1\\fR/\\fB0\\fR,\n"
            "\\fByes\\fR/\\fBno\\fR, \\fBon\\fR/\\fBoff\\fR in any case; anything else is a usage error).",
     .md_default = "off",
     .md =
         "nothing on the terminal (no samples, start or status line; the summary only with `--summary`); `-o FILE` is "
         "still written (`TRACKER_QUIET=true`: the Rust tool's `true`/`false`, also `1`/`0`, `yes`/`no`, `on`/`off`)"},
    {.flag = "view",
     .commands = CLI_CMD_TRACK,
     .arg = "VIEW",
     .man_arg = "auto|human|log|samples",
     .env = "TRACKER_VIEW",
     .section = "tracker",
     .key = "view",
     .type = CLI_T_VIEW,
     .def = CLI_VIEW_AUTO,
     .layer_off = L(view),
     .set_off = L(view_set),
     .merged_off = M(view),
     .what = "a view (auto, human, log or samples)",
     .must = "\"auto\", \"human\", \"log\" or \"samples\"",
     .help = "auto (default): human when stderr is a terminal (also with -o FILE),\n"
             "log where stderr goes to a CI's or SLURM job's log (GitHub Actions,\n"
             "GitLab CI, Jenkins, Buildkite, SLURM_JOB_ID set), else samples; and\n"
             "samples whenever -q, or --format without -o, is given; human: a start\n"
             "line, a status line on a terminal and the summary's answer at the end\n"
             "(all of it with --summary), no sample lines on stderr; log: a start\n"
             "line, a progress line a minute and at each phase, the answer, the\n"
             "samples in a file the start line names (on a CI runner in its\n"
             "temporary directory, gzipped at the end; else the working directory)\n"
             "unless -o names one; samples: JSON lines (or CSV) on stderr or -o",
     .man =
         "What the run shows on the terminal or in a log (config: \\fB[tracker] view\\fR; environment:\n"
         "\\fBTRACKER_VIEW\\fR). \\fBauto\\fR (default): \\fBsamples\\fR with \\fB\\-q\\fR, or with\n"
         "\\fB\\-\\-format\\fR (anywhere: command line, config, environment) and no \\fB\\-o\\fR; else\n"
         "\\fBhuman\\fR when standard error is a terminal (also with \\fB\\-o\\fR \\fIFILE\\fR); else\n"
         "\\fBlog\\fR where standard error goes to a log people read (GitHub Actions:\n"
         "\\fBGITHUB_ACTIONS\\fR=true; GitLab CI: \\fBGITLAB_CI\\fR=true; Jenkins: \\fBJENKINS_URL\\fR;\n"
         "Buildkite: \\fBBUILDKITE\\fR=true; a SLURM job: \\fBSLURM_JOB_ID\\fR); else \\fBsamples\\fR. "
         "\\fBsamples\\fR: JSON lines (or CSV rows) on\n"
         "standard error or \\fB\\-o\\fR, the behaviour programs rely on. \\fBhuman\\fR: no sample lines on\n"
         "standard error; one start line (what is tracked: the command and its tree, PID \\fIN\\fR's tree,\n"
         "or the whole machine when no command is given; the interval; where samples go; how to stop),\n"
         "then, on a terminal only, one status line on the terminal's last row (kept for it, as apt keeps\n"
         "its progress bar: the job's output scrolls in the rows above, never mixed with it; given back\n"
         "at the end, also after SIGINT or SIGTERM; a tracker killed with SIGKILL leaves the terminal's\n"
         "scroll region set, which \\fBreset\\fR(1) clears) drawn at most once a second (elapsed\n"
         "time, the job's cores and memory now and at their peak, the GPU once one was seen; the whole\n"
         "machine's without a job), cut to the terminal's width, erased before any other line of the\n"
         "tool's and not drawn while a program of the job has the terminal in raw or no-echo mode (an\n"
         "editor, a pager), and at the end the summary's answer (what the job used, what to ask for, the\n"
         "notes), how long it ran with its exit status, and where the rest is; with \\fB\\-\\-summary\\fR the\n"
         "whole summary instead (once). With \\fB\\-o\\fR \\fIFILE\\fR\n"
         "the samples are written there too. The start line and the answer are broken between words at\n"
         "the terminal's width (without a terminal \\fBCOLUMNS\\fR, else 80 columns).\n"
         "\\fBlog\\fR: the start line (naming the samples' file and what the log gets), a progress line\n"
         "of its own (elapsed time, the job's cores and memory now and at their peak) at most once a\n"
         "minute and at each phase mark (\\fB| phase train started\\fR), and the answer at the end, as\n"
         "\\fBhuman\\fR's; the samples go to \\fB\\-o\\fR, or to a file made anew,\n"
         "\\fBresource\\-tracker\\-\\fR\\fINAME\\fR\\fB.jsonl\\fR (\\fINAME\\fR as \\fB\\-o\\fR \\fIDIR\\fR\\fB/\\fR\n"
         "names it; \\fB\\-2\\fR and so on where one is there): on a CI runner in its temporary\n"
         "directory, never the checkout (\\fBRUNNER_TEMP\\fR, \\fBRUNNER_TEMP_PROJECT_DIR\\fR or\n"
         "\\fB$CI_PROJECT_DIR.tmp\\fR, \\fBWORKSPACE_TMP\\fR; else \\fBTMPDIR\\fR, else \\fB/tmp\\fR),\n"
         "gzipped to \\fIFILE\\fR\\fB.gz\\fR at the end (the step summary names it); in a SLURM job in\n"
         "the working directory.",
     .md_default = "`auto`",
     .md = "`human`, `log`, `samples` or `auto`: samples with `-q` or `--format` without `-o`; else human on a "
           "terminal (also with `-o FILE`), log in a CI's or SLURM job's log (GitHub Actions, GitLab CI, Jenkins, "
           "Buildkite, `SLURM_JOB_ID`), else samples (`[tracker] view`, `TRACKER_VIEW`)"},
    {.flag = "job-name",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'n',
     .arg = "NAME",
     .env = "TRACKER_JOB_NAME",
     .section = "job",
     .key = "name",
     .type = CLI_T_META,
     .layer_off = L(meta[META_JOB_NAME]),
     .set_off = NO,
     .merged_off = M(meta[META_JOB_NAME]),
     .lead = true,
     .help = "job metadata; also --project-name, --stage-name, --task-name, --team,\n"
             "--env, --language, --orchestrator, --executor, --external-run-id,\n"
             "--container-image (or TRACKER_JOB_NAME, TRACKER_PROJECT_NAME, ...)",
     .man = "Job metadata, written as \\fBjob_name\\fR in every sample. Likewise \\fB\\-\\-project\\-name\\fR,\n"
            "\\fB\\-\\-stage\\-name\\fR, \\fB\\-\\-task\\-name\\fR, \\fB\\-\\-team\\fR, \\fB\\-\\-env\\fR, "
            "\\fB\\-\\-language\\fR,\n"
            "\\fB\\-\\-orchestrator\\fR, \\fB\\-\\-executor\\fR, \\fB\\-\\-external\\-run\\-id\\fR, "
            "\\fB\\-\\-container\\-image\\fR.",
     .md_default = "env",
     .md = "job metadata (`TRACKER_JOB_NAME`, ...)"},
    META(META_PROJECT_NAME, "project-name", "TRACKER_PROJECT_NAME", "project_name"),
    META(META_STAGE_NAME, "stage-name", "TRACKER_STAGE_NAME", "stage_name"),
    META(META_TASK_NAME, "task-name", "TRACKER_TASK_NAME", "task_name"),
    META(META_TEAM, "team", "TRACKER_TEAM", "team"),
    META(META_ENV, "env", "TRACKER_ENV", "env"),
    META(META_LANGUAGE, "language", "TRACKER_LANGUAGE", "language"),
    META(META_ORCHESTRATOR, "orchestrator", "TRACKER_ORCHESTRATOR", "orchestrator"),
    META(META_EXECUTOR, "executor", "TRACKER_EXECUTOR", "executor"),
    META(META_EXTERNAL_RUN_ID, "external-run-id", "TRACKER_EXTERNAL_RUN_ID", "external_run_id"),
    META(META_CONTAINER_IMAGE, "container-image", "TRACKER_CONTAINER_IMAGE", "container_image"),
    {.flag = "job-id",
     .commands = CLI_CMD_TRACK,
     .arg = "ID",
     .env = "TRACKER_JOB_ID",
     .section = "job",
     .key = "job_id",
     .type = CLI_T_TEXT,
     .layer_off = L(job_id),
     .set_off = NO,
     .merged_off = M(job_id),
     .must = "a non-empty string",
     .help = "the job every node's run shares when it runs on several nodes\n"
             "(default: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...; docs/where.md):\n"
             "summary puts the nodes' files of one job together",
     .man = "The job every node's run shares, when the job runs on several nodes (SLURM, torchrun, mpirun, a\n"
            "Kubernetes indexed Job): written with the node and the rank as \\fBmember\\fR in every sample.\n"
            "Default: what the launcher's variables say (\\fBSLURM_JOB_ID\\fR, \\fBTORCHELASTIC_RUN_ID\\fR,\n"
            "\\fBPMIX_NAMESPACE\\fR, \\fBPOD_JOB_NAME\\fR with \\fBJOB_COMPLETION_INDEX\\fR); also\n"
            "\\fBTRACKER_JOB_ID\\fR and \\fB[job] job_id\\fR. \\fBresource\\-tracker summary\\fR puts the files of\n"
            "one job together.",
     .md_default = "the launcher's",
     .md = "the job every node's run shares (`TRACKER_JOB_ID`; docs/where.md, \"Jobs on several nodes\"); `-o DIR/` "
           "then writes `DIR/JOB.NODE.rRANK.jsonl`"},
    {.flag = "node",
     .commands = CLI_CMD_TRACK,
     .arg = "NAME",
     .env = "TRACKER_NODE",
     .section = "job",
     .key = "node",
     .type = CLI_T_TEXT,
     .layer_off = L(node),
     .set_off = NO,
     .merged_off = M(node),
     .must = "a non-empty string",
     .help = "the node's name in that job (default: SLURMD_NODENAME, else the\n"
             "host name)",
     .man =
         "The node's name in that job (default: \\fBSLURMD_NODENAME\\fR, a pod's \\fBPOD_NAME\\fR, else the\n"
         "host name; \\fBTRACKER_NODE\\fR, \\fB[job] node\\fR). With \\fB\\-o\\fR \\fIDIR\\fB/\\fR (a path ending\n"
         "in a slash) the run writes \\fIDIR\\fB/\\fIJOB\\fB.\\fINODE\\fB.r\\fIRANK\\fB.jsonl\\fR (or \\fB.csv\\fR),\n"
         "one file per node or task.",
     .md_default = "the launcher's",
     .md = "this node's name in that job (`TRACKER_NODE`)"},
    {.flag = "per-node",
     .commands = CLI_CMD_TRACK,
     .env = "TRACKER_PER_NODE",
     .section = "job",
     .key = "per_node",
     .type = CLI_T_BOOL,
     .layer_off = L(per_node),
     .set_off = L(per_node_set),
     .merged_off = M(per_node),
     .help = "one tracker a node where several tasks of the job share it (srun,\n"
             "mpirun, torchrun): the task of local rank 0 tracks the node's tasks\n"
             "(and writes the node's file), the others run the command untracked\n"
             "(or TRACKER_PER_NODE=1)",
     .man = "One tracker per node where several tasks of the job share it (\\fBsrun\\fR, \\fBmpirun\\fR,\n"
            "\\fBtorchrun\\fR start a tracker per task): the task of local rank 0 (\\fBSLURM_LOCALID\\fR,\n"
            "\\fBOMPI_COMM_WORLD_LOCAL_RANK\\fR, \\fBLOCAL_RANK\\fR) tracks its own command and the node's other\n"
            "tasks (the other children of its parent, \\fBslurmstepd\\fR, found at every sample, each counted\n"
            "to its end; not the tracker's own CPU), samples on until they ended, and writes the node's one\n"
            "file (its rank in the name); a task of a higher local rank runs its command in the tracker's\n"
            "place, untracked (the same pid and exit status, nothing written). The tracker must be the\n"
            "task's process (\\fBsrun resource\\-tracker ...\\fR, or \\fBexec\\fR in a wrapper script). No\n"
            "cgroup is made or read for the node's tasks. Without a local rank: one warning, and the task's\n"
            "command alone is tracked. Also \\fBTRACKER_PER_NODE=1\\fR and \\fB[job] per_node = true\\fR; only\n"
            "with a command.",
     .md_default = "off",
     .md = "one tracker a node where several tasks share it: local rank 0's tracks the node's tasks and writes the "
           "node's file, the others run their command untracked (`[job] per_node`, `TRACKER_PER_NODE`; docs/where.md, "
           "\"Jobs on several nodes\")"},
    {.flag = "tag",
     .commands = CLI_CMD_TRACK,
     .arg = "KEY=VALUE",
     .section = "job",
     .key = "tags",
     .type = CLI_T_TAG,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .what = "KEY=VALUE",
     .help = "a tag for the run (repeatable)",
     .man = "A tag for the run; repeatable. A tag from the command line replaces a config tag with the same key.",
     .md_default = "none",
     .md = "repeatable"},
    {.flag = "summary",
     .commands = CLI_CMD_TRACK,
     .section = "tracker",
     .key = "summary",
     .type = CLI_T_BOOL,
     .layer_off = L(summary),
     .set_off = L(summary_set),
     .merged_off = M(summary),
     .help = "print the run's summary to stderr at exit",
     .man = "Print the run's summary to standard error at exit (config: \\fB[tracker] summary = true\\fR).",
     .md_default = "off",
     .md = "print the run's summary to stderr at exit (`[tracker] summary`)"},
    {.flag = "report",
     .commands = CLI_CMD_TRACK,
     .arg = "FILE",
     .section = "tracker",
     .key = "report",
     .type = CLI_T_FILE,
     .layer_off = L(report),
     .set_off = NO,
     .merged_off = M(report),
     .must = "a file name",
     .help = "write the run's HTML report at exit (a FIFO's reader is waited for at\n"
             "most TRACKER_FINISH_TIMEOUT)",
     .man = "Write the run's HTML report to \\fIFILE\\fR at exit (config: \\fB[tracker] report\\fR; a file that\n"
            "cannot be created is a usage error before the command starts, as for \\fB\\-o\\fR): the\n"
            "\\fBreport\\fR subcommand's page, with the host, the cloud, the command and its exit status; the\n"
            "Keeper lookup in it takes at most 5 s, and the price where the run ran is looked up when cloud\n"
            "discovery found the instance. A FIFO's reader may come later: it is waited for at most\n"
            "\\fBTRACKER_FINISH_TIMEOUT\\fR seconds, and given the report for at most as long again; past\n"
            "either, one warning, and the exit status stays the command's.",
     .md_default = "none",
     .md = "write the run's HTML report at exit (`[tracker] report`)"},
    {.flag = "benchmark",
     .commands = CLI_CMD_TRACK,
     .arg = "FILE",
     .env = "TRACKER_BENCHMARK",
     .section = "tracker",
     .key = "benchmark",
     .type = CLI_T_FILE,
     .layer_off = L(benchmark),
     .set_off = NO,
     .merged_off = M(benchmark),
     .must = "a file name",
     .help = "write Snakemake's benchmark file (its TSV: s, h:m:s, max_rss, ...) at\n"
             "exit, replacing FILE (docs/workflows.md)",
     .man = "Write the run as Snakemake's benchmark file (the TSV a rule's \\fBbenchmark:\\fR gets: \\fBs\\fR,\n"
            "\\fBh:m:s\\fR, \\fBmax_rss\\fR, \\fBmax_vms\\fR, \\fBmax_uss\\fR, \\fBmax_pss\\fR, \\fBio_in\\fR,\n"
            "\\fBio_out\\fR, \\fBmean_load\\fR, \\fBcpu_time\\fR; MiB, two decimals) to \\fIFILE\\fR at exit: written\n"
            "to a new file of its own beside \\fIFILE\\fR, then renamed over it (config: \\fB[tracker] benchmark\\fR; "
            "environment:\n"
            "\\fBTRACKER_BENCHMARK\\fR). A file that cannot be written is one warning at the end; the exit\n"
            "status stays the command's. The figures and their units are in \\fIdocs/workflows.md\\fR.",
     .md_default = "none",
     .md = "write Snakemake's benchmark file at exit, a new file beside FILE renamed over it; unwritable: one warning "
           "(`[tracker] benchmark`, `TRACKER_BENCHMARK`; docs/workflows.md)"},
    {.flag = "history",
     .commands = CLI_CMD_TRACK | CLI_CMD_RECOMMEND | CLI_CMD_HISTORY,
     .opt = CLI_O_HISTORY,
     .arg = "FILE|URL",
     .env = "TRACKER_HISTORY",
     .section = "history",
     .key = "path",
     .type = CLI_T_FILE,
     .layer_off = L(history),
     .set_off = NO,
     .merged_off = M(history),
     .must = "a file name or a postgresql:// URL",
     .help = "append the run's summary to this run history (an SQLite file, or postgresql://USER@HOST/DB; or\n"
             "TRACKER_HISTORY)",
     .man = "Append the run's summary to the run history \\fIFILE\\fR, an SQLite database, or \\fIURL\\fR,\n"
            "\\fBpostgresql://\\fIUSER\\fB@\\fIHOST\\fR[\\fB:\\fIPORT\\fR]\\fB/\\fIDB\\fR[\\fB?sslmode=\\fR...], a PostgreSQL\n"
            "database shared by a team (libpq.so.5, loaded at run time; the password from \\fB~/.pgpass\\fR,\n"
            "\\fBPGPASSFILE\\fR or \\fBPGSERVICE\\fR; config: \\fB[history] url\\fR or \\fBpath\\fR; environment:\n"
            "\\fBTRACKER_HISTORY\\fR). A file SQLite cannot create or write (its directory missing or not\n"
            "writable: the journal is made beside it), or a FIFO, or a URL without libpq, is a usage error\n"
            "before the command starts; a file that is no database is one warning at the end. A row that\n"
            "cannot be written (a locked file; a server down, slow, full or refusing the password, within\n"
            "\\fBTRACKER_FINISH_TIMEOUT\\fR) is kept in the state directory and written by the next run with\n"
            "that history or \\fBresource-tracker upload\\fR, once.",
     .md_default = "none",
     .md = "append the run's summary to a run history: an SQLite file, or a PostgreSQL URL "
           "`postgresql://USER@HOST/DB` (`[history] url` or `path`, `TRACKER_HISTORY`; docs/contracts.md)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "the run history, a file or a postgresql:// URL (default TRACKER_HISTORY, or [history] url\n"
                      "in the config)",
              .man =
                  "The run history, an SQLite file or a \\fBpostgresql://\\fR URL (default \\fBTRACKER_HISTORY\\fR,\n"
                  "else \\fB[history] url\\fR or \\fBpath\\fR of the config file). Only with \\fB\\-\\-job\\fR."},
             {.commands = CLI_CMD_HISTORY,
              .help = "the run history, a file or a postgresql:// URL (default: TRACKER_HISTORY, else\n"
                      "[history] url)",
              .man = "The run history, an SQLite file or a \\fBpostgresql://\\fR URL (default \\fBTRACKER_HISTORY\\fR,\n"
                     "else \\fB[history] url\\fR or \\fBpath\\fR of the config file)."},
             {0}}},
    {.flag = "cgroup",
     .commands = CLI_CMD_TRACK,
     .arg = "auto|off",
     .section = "tracker",
     .key = "cgroup",
     .type = CLI_T_CGROUP,
     .layer_off = L(cgroup_off),
     .set_off = L(cgroup_set),
     .merged_off = M(cgroup_off),
     .what = "a choice (auto or off)",
     .must = "\"auto\" or \"off\"",
     .help = "auto (default): run the command in a cgroup of its own where one can be\n"
             "made, and read the tracked tree's cgroup (limits, OOM kills, throttling,\n"
             "pressure); off: make and read no cgroup",
     .man = "\\fBauto\\fR (default): in wrapper mode run the command in a cgroup of its own where one can be\n"
            "made, and read the cgroup of the tracked tree (see \\fBCGROUPS\\fR); \\fBoff\\fR: make and read\n"
            "no cgroup (config: \\fB[tracker] cgroup\\fR).",
     .md_default = "`auto`",
     .md = "`auto`: run the command in a cgroup of its own where one can be made, and read the tracked tree's cgroup; "
           "`off`: make and read none (`[tracker] cgroup`); see [The job's cgroup](accounting.md#the-jobs-cgroup)"},
    {.flag = "wait-all",
     .commands = CLI_CMD_TRACK,
     .section = "tracker",
     .key = "wait_all",
     .type = CLI_T_BOOL,
     .layer_off = L(wait_all),
     .set_off = L(wait_all_set),
     .merged_off = M(wait_all),
     .help = "after the command exits, go on until every process it started has\n"
             "ended (default: exit with the command, saying how many were left)",
     .man = "Wrapper mode: after the command exits, keep sampling until every process it started has ended\n"
            "(with a cgroup: until the group is empty; without one: until the tracker has no child left),\n"
            "then exit with the command's own status (config: \\fB[tracker] wait_all = true\\fR). A\n"
            "terminating signal received while waiting ends the wait; the processes left are not\n"
            "signalled. Given on the command line without a command it is a usage error.",
     .md_default = "off",
     .md = "wrapper mode: after the command exits, go on until every process it started has ended (`[tracker] "
           "wait_all`)"},
    {.flag = "prometheus",
     .commands = CLI_CMD_TRACK,
     .arg = "ADDR:PORT",
     .section = "export",
     .key = "prometheus",
     .type = CLI_T_TEXT,
     .layer_off = L(prometheus),
     .set_off = NO,
     .merged_off = NO,
     .must = "a non-empty string (\"ADDR:PORT\")",
     .help = "serve /metrics (Prometheus text, or OpenMetrics) while tracking;\n"
             "ADDR 127.0.0.1 when left out (:9101), 0.0.0.0 or [::] for every interface,\n"
             "PORT 0 for a free one (said at the start)",
     .man = "While tracking, serve \\fB/metrics\\fR over HTTP for Prometheus to scrape: the text format 0.0.4,\n"
            "or OpenMetrics 1.0.0 when the request's Accept asks for it (see \\fBEXPORT\\fR). \\fIADDR\\fR is a\n"
            "numeric IPv4 address, \\fB[\\fIIPv6\\fB]\\fR or \\fBlocalhost\\fR; left out (\\fB:9101\\fR or\n"
            "\\fB9101\\fR) it is 127.0.0.1: the server listens on loopback unless told otherwise\n"
            "(\\fB0.0.0.0\\fR, \\fB[::]\\fR). \\fIPORT\\fR 0 lets the kernel choose, and the address is said on\n"
            "stderr. A port that cannot be listened on is a usage error (exit 2, nothing started)\n"
            "(config: \\fB[export] prometheus\\fR).",
     .md_default = "none",
     .md = "serve `/metrics` (Prometheus text, or OpenMetrics) while tracking; ADDR defaults to 127.0.0.1, PORT 0 "
           "picks a free one (`[export] prometheus`); see [Export](exporters.md)"},
    {.flag = "prometheus-textfile",
     .commands = CLI_CMD_TRACK,
     .arg = "DIR",
     .section = "export",
     .key = "prometheus_textfile",
     .type = CLI_T_TEXT,
     .layer_off = L(prometheus_textfile),
     .set_off = NO,
     .merged_off = NO,
     .must = "a non-empty string (a directory)",
     .help = "write DIR/resource_tracker_JOB.prom (node_exporter's textfile\n"
             "collector) while the job runs and at its end, replaced atomically",
     .man = "Write \\fIDIR\\fB/resource_tracker_\\fIJOB\\fB.prom\\fR for node_exporter's textfile collector:\n"
            "at the start, every 5 seconds (or every interval, when longer) while the job runs, and once\n"
            "more at its end with its exit status. \\fIJOB\\fR is the job name, else the command's name,\n"
            "else \\fBsystem\\fR. Each write replaces the file atomically (config:\n"
            "\\fB[export] prometheus_textfile\\fR).",
     .md_default = "none",
     .md = "write `DIR/resource_tracker_JOB.prom` for node_exporter's textfile collector while the job runs and at its "
           "end (`[export] prometheus_textfile`)"},
    {.flag = "otlp",
     .commands = CLI_CMD_TRACK,
     .arg = "URL",
     .section = "export",
     .key = "otlp",
     .type = CLI_T_TEXT,
     .layer_off = L(otlp),
     .set_off = NO,
     .merged_off = NO,
     .must = "a non-empty string (a URL)",
     .help = "push metrics over OTLP/HTTP (JSON, gzip) to URL (/v1/metrics appended\n"
             "unless there; or OTEL_EXPORTER_OTLP_ENDPOINT)",
     .man = "Push metrics over OTLP/HTTP (JSON, gzip) to \\fIURL\\fB/v1/metrics\\fR (used as it is when it\n"
            "already ends so), every \\fB\\-\\-otlp\\-interval\\fR seconds and once more at the end (config:\n"
            "\\fB[export] otlp\\fR; environment: \\fBOTEL_EXPORTER_OTLP_ENDPOINT\\fR).",
     .md_default = "none",
     .md = "push metrics over OTLP/HTTP (JSON, gzip) to `URL/v1/metrics` (`[export] otlp`, "
           "`OTEL_EXPORTER_OTLP_ENDPOINT`)"},
    {.flag = "otlp-interval",
     .commands = CLI_CMD_TRACK,
     .arg = "SECS",
     .section = "export",
     .key = "otlp_interval",
     .type = CLI_T_SECS,
     .min = INTERVAL_MIN,
     .max = INTERVAL_MAX,
     .def = OTLP_INTERVAL_DEF,
     .layer_off = L(otlp_interval),
     .set_off = L(otlp_interval_set),
     .merged_off = NO,
     .help = "seconds between OTLP pushes (default {def}; OTEL_METRIC_EXPORT_INTERVAL ms)",
     .man = "Seconds between OTLP pushes, 0.01 to 86400 (default 10; \\fBOTEL_METRIC_EXPORT_INTERVAL\\fR in\n"
            "milliseconds; config: \\fB[export] otlp_interval\\fR).",
     .md_default = "10",
     .md = "seconds between OTLP pushes (`[export] otlp_interval`, `OTEL_METRIC_EXPORT_INTERVAL` in ms)"},
    {.flag = "expected-cores",
     .commands = CLI_CMD_TRACK | CLI_CMD_SUMMARY,
     .opt = CLI_O_EXPECTED_CORES,
     .arg = "N",
     .section = "tracker",
     .key = "expected_cores",
     .type = CLI_T_CORES,
     .max = 1e6,
     .layer_off = L(expected_cores),
     .set_off = L(expected_cores_set),
     .merged_off = M(expected_cores),
     .what = "a number of cores above 0",
     .help = "cores the job is expected to use: the summary's hardware percentages of\n"
             "the command (main), its descendants and both divide by N (default: all)",
     .man = "The cores the job is expected to use: the summary's hardware percentages of the command\n"
            "(main), its descendants and both divide the sum of their core percentages by \\fIN\\fR (default:\n"
            "all the machine's cores; the machine's own always divides by all). A number above 0 (config:\n"
            "\\fB[tracker] expected_cores\\fR).",
     .md_default = "all",
     .md = "cores the job is expected to use: the summary's hardware percentages of the command, its descendants and "
           "both divide by N (`[tracker] expected_cores`)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY,
              .help = "the parts' hardware percentages divide by N (default: all cores)",
              .man =
                  "The hardware percentages of main, descendants and combined divide by \\fIN\\fR (above 0; default\n"
                  "all cores), as in tracking."},
             {0}}},
    {.flag = "gpus",
     .commands = CLI_CMD_TRACK | CLI_CMD_SUMMARY,
     .opt = CLI_O_GPUS,
     .arg = "UUID,...",
     .section = "tracker",
     .key = "gpus",
     .type = CLI_T_GPUS,
     .layer_off = L(gpus),
     .set_off = NO,
     .merged_off = NO,
     .help = "GPUs whose utilization the summary's GPU percentages count (default: all)",
     .man = "The GPUs whose utilization the summary's GPU percentages count, and whose number divides them\n"
            "(default: all). GPU RAM covers every GPU either way, as in gpu_tracker. A chosen GPU that is\n"
            "not there is one warning when the run's summary is made (\\fB\\-\\-summary\\fR, \\fB\\-\\-report\\fR,\n"
            "\\fB\\-\\-history\\fR) (config: \\fB[tracker] gpus\\fR, a string or an array).",
     .md_default = "all",
     .md = "GPUs whose utilization the summary's GPU percentages count (`[tracker] gpus`, a string or an array)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY,
              .help = "the GPUs whose utilization counts (default: all; needs the JSON lines'\n"
                      "GPU list)",
              .man = "The GPUs whose utilization counts, and whose number divides (default all). Needs the JSON\n"
                     "lines' per-GPU list: a CSV file has none."},
             {0}}},
    {.flag = "no-price-lookup",
     .commands = CLI_CMD_TRACK | CLI_CMD_RECOMMEND | CLI_CMD_REPORT,
     .opt = CLI_O_NO_PRICE_LOOKUP,
     .section = "tracker",
     .key = "price_lookup",
     .type = CLI_T_OFF,
     .layer_off = L(price_lookup_off),
     .set_off = L(price_lookup_off_set),
     .merged_off = M(price_lookup_off),
     .help = "ask the Spare Cores Keeper API for no prices (the report's cheapest server\n"
             "and cost); offline, no \"prices: offline\" line either (or\n"
             "TRACKER_KEEPER_URL=off)",
     .man = "Ask the Spare Cores Keeper API for nothing: the report has no cheapest server and no cost.\n"
            "Without it, a lookup that fails is one quiet line of the report's answer and nothing on standard\n"
            "error: offline, \\fBprices: offline (Keeper not reached:\\fR \\fIreason\\fR\\fB;\n"
            "TRACKER_KEEPER_URL=off or \\-\\-no\\-price\\-lookup stops the lookup)\\fR; this option stops it. The\n"
            "same as \\fBTRACKER_KEEPER_URL=off\\fR (config: \\fB[tracker] price_lookup = false\\fR). The\n"
            "subcommands \\fBrecommend\\fR and \\fBreport\\fR take it too.",
     .md_default = "off",
     .md =
         "ask the Spare Cores Keeper API for no prices: no cheapest server or cost in the report; offline, no `prices: "
         "offline (...)` line in the answer either (`[tracker] price_lookup = false`, `TRACKER_KEEPER_URL=off`)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "ask Keeper nothing (no cheapest server, no cost, no line about it;\n"
                      "as TRACKER_KEEPER_URL=off)",
              .man =
                  "Ask the Spare Cores Keeper API nothing: no cheapest server, no cost, no \\fBprices:\\fR line (as\n"
                  "\\fBTRACKER_KEEPER_URL=off\\fR); \\fBserver_lookup_error\\fR is null. Offline, this stops a lookup\n"
                  "that can only fail."},
             {.commands = CLI_CMD_REPORT,
              .help = "ask Keeper nothing (no cheapest server, no cost, no note; as\n"
                      "TRACKER_KEEPER_URL=off); offline a lookup only fails, as one line\n"
                      "of the page, \"prices: offline (...)\", never on stderr",
              .man =
                  "Ask the Spare Cores Keeper API nothing: no cheapest server, no cost and no note about it (as\n"
                  "\\fBTRACKER_KEEPER_URL=off\\fR). Without it a lookup that fails is one line of the page, in the\n"
                  "answer's cost, and nothing on standard error: \\fBprices: offline (Keeper not reached:\\fR\n"
                  "\\fIreason\\fR\\fB; TRACKER_KEEPER_URL=off or \\-\\-no\\-price\\-lookup stops the lookup)\\fR when "
                  "no\n"
                  "reply came (no network, no name, Keeper down or slower than 5 s), \\fBprices: unavailable\n"
                  "(\\fR\\fIreason\\fR\\fB; ...)\\fR when Keeper replied wrongly. Offline, this option stops a lookup\n"
                  "that can only fail."},
             {0}}},
    {.flag = "energy",
     .commands = CLI_CMD_TRACK,
     .arg = "auto|off",
     .env = "TRACKER_ENERGY",
     .section = "tracker",
     .key = "energy",
     .type = CLI_T_CGROUP,
     .layer_off = L(energy_off),
     .set_off = L(energy_set),
     .merged_off = M(energy_off),
     .what = "a choice (auto or off)",
     .must = "\"auto\" or \"off\"",
     .help = "auto (default): the energy the machine's counters measure (RAPL, GPUs,\n"
             "power meters), else an estimate from a CPU power model, labelled so;\n"
             "off: no energy and no carbon figures",
     .man = "\\fBauto\\fR (default): the energy the machine's counters measure (RAPL through powercap or the\n"
            "perf power PMU, the GPUs, hwmon power meters), else an estimate of the CPU's from a model,\n"
            "labelled \\fBestimated\\fR with its expected error; \\fBoff\\fR: no energy and no carbon figures\n"
            "(config: \\fB[tracker] energy\\fR; environment: \\fBTRACKER_ENERGY\\fR).",
     .md_default = "`auto`",
     .md = "`auto`: the energy the machine's counters measure, else the CPU's estimated from a model, labelled so; "
           "`off`: no energy or carbon figures (`[tracker] energy`, `TRACKER_ENERGY`)"},
    {.flag = "step-summary",
     .commands = CLI_CMD_TRACK,
     .arg = "auto|off",
     .env = "TRACKER_STEP_SUMMARY",
     .section = "tracker",
     .key = "step_summary",
     .type = CLI_T_SWITCH,
     .layer_off = L(step_summary_off),
     .set_off = L(step_summary_set),
     .merged_off = M(step_summary_off),
     .what = "a choice (auto or off)",
     .must = "true, false, \"auto\" or \"off\"",
     .help = "auto (default): on GitHub Actions (GITHUB_ACTIONS=true), append the\n"
             "run's summary as Markdown (its answer, a table, the notes, charts of\n"
             "CPU and memory) to the file $GITHUB_STEP_SUMMARY names; off: never",
     .man = "\\fBauto\\fR (default): on GitHub Actions (\\fBGITHUB_ACTIONS=true\\fR, and\n"
            "\\fBGITHUB_STEP_SUMMARY\\fR naming a file), append the run's summary as Markdown to that file at\n"
            "exit: the answer, a table of the main figures, the recommendation, the notes and Mermaid charts\n"
            "of the job's cores and memory (what \\fBsummary \\-\\-format markdown\\fR prints). The file is never\n"
            "truncated and kept under GitHub's 1 MiB a step: past it a one-line note, or nothing, and a\n"
            "warning. A file that cannot be written is one warning; the exit status stands. \\fBoff\\fR: never\n"
            "(config: \\fB[tracker] step_summary = false\\fR; environment: \\fBTRACKER_STEP_SUMMARY\\fR).",
     .md_default = "`auto`",
     .md = "`auto`: on GitHub Actions (`GITHUB_ACTIONS=true`), append the run as Markdown to the file "
           "`GITHUB_STEP_SUMMARY` names, kept under GitHub's 1 MiB; `off`: never (`[tracker] step_summary = false`, "
           "`TRACKER_STEP_SUMMARY`)"},
    {.flag = "place",
     .commands = CLI_CMD_TRACK,
     .arg = "auto|off",
     .env = "TRACKER_PLACE",
     .section = "tracker",
     .key = "place",
     .type = CLI_T_CGROUP,
     .layer_off = L(place_off),
     .set_off = L(place_set),
     .merged_off = M(place_off),
     .what = "a choice (auto or off)",
     .must = "\"auto\" or \"off\"",
     .help = "auto (default): find where the job runs (SLURM, Kubernetes, GitHub\n"
             "Actions) and what it was given there (cores, memory, GPUs, time limit;\n"
             "docs/where.md), and fill the job metadata not given; off: read none",
     .man = "\\fBauto\\fR (default): at the start of a tracking run, find where the job runs and what it was\n"
            "given there: SLURM (\\fBSLURM_JOB_ID\\fR set: cores, memory and GPUs from its variables, the time\n"
            "limit from \\fBSLURM_JOB_END_TIME\\fR or asked of \\fBscontrol\\fR, else \\fBsqueue\\fR, killed after\n"
            "2 s), Kubernetes (\\fBKUBERNETES_SERVICE_HOST\\fR set: the downward API variables\n"
            "\\fBCPU_REQUEST\\fR, \\fBMEMORY_REQUEST\\fR, \\fBCPU_LIMIT\\fR, \\fBMEMORY_LIMIT\\fR, \\fBPOD_NAME\\fR, "
            "...)\n"
            "or GitHub Actions (\\fBGITHUB_ACTIONS=true\\fR); the summary measures the job against it, and the\n"
            "job metadata not given (\\fB\\-\\-job\\-name\\fR, \\fB\\-\\-tag\\fR keys, ...) is filled from there. A\n"
            "malformed value is one warning and is not used; the command's status never changes.\n"
            "\\fBoff\\fR: nothing is read and nothing is run. \\fBdocs/where.md\\fR names every variable (config:\n"
            "\\fB[tracker] place\\fR; environment: \\fBTRACKER_PLACE\\fR).",
     .md_default = "`auto`",
     .md = "`auto`: find where the job runs (SLURM, Kubernetes, GitHub Actions) and what it was given there, and fill "
           "the job metadata not given ([where.md](where.md)); `off`: read nothing, run no `scontrol` (`[tracker] "
           "place`, `TRACKER_PLACE`)"},
    {.flag = "cpu-tdp",
     .commands = CLI_CMD_TRACK,
     .arg = "WATTS",
     .env = "TRACKER_CPU_TDP",
     .section = "tracker",
     .key = "cpu_tdp",
     .type = CLI_T_ABOVE,
     .max = WATTS_MAX,
     .layer_off = L(cpu_tdp),
     .set_off = L(cpu_tdp_set),
     .merged_off = M(cpu_tdp),
     .unit = "watts",
     .help = "the CPU's thermal design power per package, for the energy estimate\n"
             "where no counter can be read (default: the CPU model's from a table)",
     .man = "The CPU's thermal design power per package, for the estimate where no counter can be read: a\n"
            "busy logical core draws \\fIWATTS\\fR divided by the package's threads, an idle one 30% of that.\n"
            "Default: the CPU model's TDP from the shipped table (\\fBshare/resource-tracker/cpu-tdp.csv\\fR),\n"
            "else 3.5 W per busy logical core. Above 0, at most 10000 (config: \\fB[tracker] cpu_tdp\\fR;\n"
            "environment: \\fBTRACKER_CPU_TDP\\fR).",
     .md_default = "the table's",
     .md =
         "the CPU's thermal design power per package for the energy estimate (`[tracker] cpu_tdp`, `TRACKER_CPU_TDP`)"},
    {.flag = "max-slowdown",
     .commands = CLI_CMD_TRACK | CLI_CMD_RECOMMEND,
     .opt = CLI_O_MAX_SLOWDOWN,
     .arg = "PCT",
     .env = "TRACKER_MAX_SLOWDOWN",
     .section = "tracker",
     .key = "max_slowdown_pct",
     .type = CLI_T_PCT,
     .max = 1000,
     .def = 10,
     .layer_off = L(max_slowdown),
     .set_off = L(max_slowdown_set),
     .merged_off = M(max_slowdown),
     .help = "how much longer than this run the cores asked for may make it, percent\n"
             "(default {def}; 5% or 5): the fewest cores predicted within it (docs/answers.md)",
     .man = "How much longer than this run the cores its own answers ask for may make it, percent: the\n"
            "summary, report, step summary and the history's summary ask for the fewest cores\n"
            "under which the run is predicted within \\fIPCT\\fR of its own duration (docs/answers.md, \"The\n"
            "CPU answer\"). Default 10; 0 to 1000, a trailing % allowed (\\fB5%\\fR) (config: \\fB[tracker]\n"
            "max_slowdown_pct\\fR, a number or such a string; environment:\n"
            "\\fBTRACKER_MAX_SLOWDOWN\\fR). \\fBrecommend \\-\\-max\\-slowdown\\fR does the same for recorded runs.",
     .md_default = "10",
     .md = "how much longer than this run the cores its own answers ask for may make it, 0 to 1000, a trailing `%` "
           "allowed (the summary, report, step "
           "summary, history): the fewest cores predicted within it (`[tracker] max_slowdown_pct`, "
           "`TRACKER_MAX_SLOWDOWN`; `recommend --max-slowdown` for recorded runs)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "the predicted duration may exceed the run's own by PCT percent\n"
                      "(default 10; 0 to 1000; 5% or 5)",
              .man = "How much longer than a run's own duration the predicted duration under the asked cores may be,\n"
                     "in percent (default 10; 0 to 1000, a trailing % allowed: \\fB5%\\fR): \\fB0\\fR asks for the\n"
                     "cores the run used at its widest,\n"
                     "\\fB50\\fR accepts half again the time for fewer cores."},
             {0}}},
    {.flag = "grid-zone",
     .commands = CLI_CMD_TRACK | CLI_CMD_SUMMARY | CLI_CMD_REPORT,
     .opt = CLI_O_GRID_ZONE,
     .arg = "ZONE",
     .env = "TRACKER_GRID_ZONE",
     .section = "tracker",
     .key = "grid_zone",
     .type = CLI_T_ZONE,
     .layer_off = L(grid_zone),
     .set_off = NO,
     .merged_off = M(grid_zone),
     .what = "a zone of the grid intensity table (a country code such as FR, or vendor:region such as "
             "aws:eu-west-3; " ZONES_HOW ")",
     .help = "where the electricity comes from, for the carbon figures: a country\n"
             "code (FR) or a cloud region (aws:eu-west-3); default: the cloud region\n"
             "discovery finds, else carbon unknown",
     .man = "Where the electricity comes from, for the carbon figures: a country code (\\fBFR\\fR) or a\n"
            "cloud region \\fIvendor\\fB:\\fIregion\\fR (\\fBaws:eu-west-3\\fR) of the shipped table\n"
            "(\\fBshare/resource-tracker/grid-intensity.csv\\fR: its first column lists the zones, its first\n"
            "lines name the source and year). Default: the cloud region discovery finds; else the carbon is\n"
            "unknown, never a world average. A zone not in the table is a usage error (config:\n"
            "\\fB[tracker] grid_zone\\fR; environment: \\fBTRACKER_GRID_ZONE\\fR). The subcommands\n"
            "\\fBsummary\\fR and \\fBreport\\fR take it too.",
     .md_default = "the cloud region",
     .md = "where the electricity comes from: a country code (`FR`) or a cloud region (`aws:eu-west-3`) of "
           "`share/resource-tracker/grid-intensity.csv`; else the carbon is unknown (`[tracker] grid_zone`, "
           "`TRACKER_GRID_ZONE`)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY | CLI_CMD_REPORT,
              .help = "where the run's electricity came from, for its carbon: a country code\n"
                      "(FR) or a cloud region (aws:eu-west-3) of the shipped table",
              .man = "Where the run's electricity came from, for its carbon: a country code (\\fBFR\\fR) or a cloud\n"
                     "region \\fIvendor\\fB:\\fIregion\\fR (\\fBaws:eu-west-3\\fR) of the shipped table\n"
                     "(\\fBshare/resource-tracker/grid-intensity.csv\\fR); one not there is a usage error. Without\n"
                     "this or \\fB\\-\\-grid\\-intensity\\fR the carbon is unknown."},
             {0}}},
    {.flag = "grid-intensity",
     .commands = CLI_CMD_TRACK | CLI_CMD_SUMMARY | CLI_CMD_REPORT,
     .opt = CLI_O_GRID_INTENSITY,
     .arg = "G",
     .env = "TRACKER_GRID_INTENSITY",
     .section = "tracker",
     .key = "grid_intensity",
     .type = CLI_T_ABOVE,
     .max = G_PER_KWH_MAX,
     .layer_off = L(grid_intensity),
     .set_off = L(grid_intensity_set),
     .merged_off = M(grid_intensity),
     .unit = "grams of CO2e per kWh",
     .help = "the grid's carbon intensity, grams of CO2e per kWh (wins over\n"
             "--grid-zone)",
     .man = "The grid's carbon intensity in grams of CO2e per kWh, above 0, at most 10000; it wins over\n"
            "\\fB\\-\\-grid\\-zone\\fR (config: \\fB[tracker] grid_intensity\\fR; environment:\n"
            "\\fBTRACKER_GRID_INTENSITY\\fR). The subcommands \\fBsummary\\fR and \\fBreport\\fR take it too.",
     .md_default = "from the zone",
     .md = "the grid's g CO2e per kWh, winning over the zone (`[tracker] grid_intensity`, `TRACKER_GRID_INTENSITY`)",
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY | CLI_CMD_REPORT,
              .help = "the grid's carbon intensity, g CO2e per kWh (wins over --grid-zone);\n"
                      "without either, the carbon is unknown",
              .man = "The grid's carbon intensity, grams of CO2e per kWh above 0 (at most 10000); it wins over\n"
                     "\\fB\\-\\-grid\\-zone\\fR."},
             {0}}},
    {.flag = "help",
     .commands = CLI_CMD_ALL,
     .opt = CLI_O_HELP,
     .short_flag = 'h',
     .type = CLI_T_HELP,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .help = "this text",
     .man = "Usage, exit 0.",
     .md = "this text, exit 0",
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_ALL & ~CLI_CMD_TRACK,
                                    .help = "this text, exit 0",
                                    .man = "The usage, the options and the exit status; exit 0."},
                                   {0}}},
    {.flag = "version",
     .commands = CLI_CMD_TRACK,
     .short_flag = 'V',
     .type = CLI_T_VERSION,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .help = "the version",
     .man = "Version, exit 0.",
     .md = "the version, exit 0"},
    /* the subcommands' own options (their --help says what they do) */
    {.flag = "json",
     .commands = CLI_CMD_SUMMARY | CLI_CMD_RECOMMEND | CLI_CMD_HISTORY | CLI_CMD_INFO,
     .opt = CLI_O_JSON,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY,
              .help = "one JSON object per file (a job's files: one for the job) instead of\n"
                      "text (docs/contracts.md section 8)",
              .man =
                  "One JSON object per file on standard output instead of text: \\fBsamples duration_secs\n"
                  "start_secs end_secs job_name allocation process machine memory_need vram_need recommendation\n"
                  "notes gpu_tracker phases phase_marks energy efficiency\\fR (every member in docs/contracts.md, "
                  "section 8;\n"
                  "\\fBphases\\fR, one object per phase name the job marked, and \\fBphase_marks\\fR are null when\n"
                  "it marked none). With a unit, the keys say\n"
                  "it (\\fBpss_gigabytes\\fR, \\fBduration_hours\\fR). The files of a job that ran on several nodes\n"
                  "give one object for the job (its view, and \\fBruns\\fR: each file's object; docs/contracts.md,\n"
                  "section 8)."},
             {.commands = CLI_CMD_RECOMMEND,
              .help = "one JSON object on stdout instead of text",
              .man =
                  "One JSON object on standard output instead of text: \\fBrecommendation\\fR (\\fBcpu memory_mib gpu\n"
                  "vram_mib oom_killed cpu_quota_cores cpu_throttled_pct memory_need_mib memory_source\n"
                  "memory_sampled headroom_pct vram_need_mib vram_source max_slowdown_pct cpu_duration_secs\n"
                  "cpu_run_duration_secs cpu_fewer cpu_fewer_duration_secs cpu_cost_usd time_limit_secs cpu_basis\n"
                  "cpu_phase cpu_phase_fewer_secs time_words\\fR, and the GPU ask: \\fBgpu_words gpu_held gpu_busy\n"
                  "vram_per_gpu_need_mib vram_per_gpu_source vram_per_gpu_mib vram_per_gpu_gib gpu_models\n"
                  "gpu_models_count gpu_memory_had_mib gpu_sm_active_pct gpu_busy_pct gpu_smaller gpu_notes\n"
                  "gpu_scheduler_notes\\fR, and \\fBmemory_reread_files_mib\\fR), \\fBcores\\fR (each run's table: \\fBduration_secs\n"
                  "cores_had peak_cores wait_secs wait_from rows\\fR, each row \\fBcores duration_secs core_hours\n"
                  "wait_bound cost_usd\\fR (at the cheapest server's price a vCPU-hour); null for a run without one), "
                  "\\fBphases\\fR (each run's phases: \\fBname\n"
                  "cores_asked cores\\fR, the phase's own table), \\fBnotes\\fR, the server found (with\n"
                  "\\fBcpu_manufacturer cpu_family cpu_model\\fR and \\fBenergy\\fR: \\fBjoules method cpu tdp_watts\n"
                  "threads_per_package busy_watts idle_watts cpu_secs duration_secs words\\fR, or null),\n"
                  "\\fBgpu_like_this\\fR (the cheapest server with GPUs like the job's, where a smaller GPU would do)\n"
                  "and \\fBserver_lookup_error\\fR (docs/contracts.md, section 8)."},
             {.commands = CLI_CMD_HISTORY,
              .help = "one JSON object per run and line (every column; tags, command, notes,\n"
                      "phases, phase_marks, cores, member and summary as JSON), instead of the table",
              .man =
                  "One JSON object per run and line, with every stored column under its name (\\fBtags\\fR,\n"
                  "\\fBcommand\\fR, \\fBnotes\\fR, \\fBphases\\fR, \\fBphase_marks\\fR and \\fBcores\\fR parsed as "
                  "JSON, \\fBsummary_json\\fR as \\fBsummary\\fR), instead of\n"
                  "the table (docs/contracts.md, section 9). The energy columns come with their methods:\n"
                  "\\fBenergy_joules\\fR and \\fBenergy_method\\fR (the machine's), \\fBprocess_energy_joules\\fR and\n"
                  "\\fBprocess_energy_method\\fR (the job's), \\fBco2e_grams\\fR and \\fBprocess_co2e_grams\\fR with\n"
                  "\\fBgrid_g_per_kwh\\fR, \\fBgrid_zone\\fR and \\fBgrid_source\\fR (null when the grid's intensity\n"
                  "was unknown)."},
             {.commands = CLI_CMD_INFO,
              .help = "one JSON object {\"host\": {...}, \"cloud\": {...}} on stdout instead of text\n"
                      "(the fields of docs/contracts.md; a missing fact is null)",
              .man =
                  "One JSON object on standard output instead of text: \\fB{\"host\": {...}, \"cloud\": {...}}\\fR "
                  "with\n"
                  "the host's \\fBhostname host_id ip vcpus cpu_model memory_mib gpu_model gpu_count gpu_memory_mib\n"
                  "storage_gb kernel os allocation\\fR (null here: known only from a run's samples) and the cloud's\n"
                  "\\fBvendor_id account_id region_id zone_id instance_type discovery_secs\\fR (docs/contracts.md,\n"
                  "section 10). What scripts should read."},
             {0}}},
    {.flag = "each",
     .commands = CLI_CMD_SUMMARY,
     .opt = CLI_O_EACH,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_SUMMARY,
                                    .help = "after a job's view, each of its files' own summary",
                                    .man = "After a job's view, each of its files' own summary."},
                                   {0}}},
    {.flag = "format",
     .commands = CLI_CMD_SUMMARY,
     .opt = CLI_O_FORMAT,
     .arg = "FORMAT",
     .type = CLI_T_CHOICE,
     .what = "a format",
     .choices = (const char *const[]){"text", "json", "markdown", "snakemake", "nextflow", NULL},
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY,
              .help = "text (the default), json (as --json), markdown (what a CI job summary\n"
                      "shows: GitHub's $GITHUB_STEP_SUMMARY), snakemake (a benchmark: TSV),\n"
                      "nextflow (a trace header and row)",
              .man =
                  "\\fBtext\\fR (the default), \\fBjson\\fR (as \\fB\\-\\-json\\fR), \\fBmarkdown\\fR (what a CI job\n"
                  "summary shows: GitHub's \\fB$GITHUB_STEP_SUMMARY\\fR, with a Mermaid chart of the job's cores and\n"
                  "memory), \\fBsnakemake\\fR: Snakemake's \\fBbenchmark:\\fR file, its header line and one row "
                  "(\\fBs\n"
                  "h:m:s max_rss max_vms max_uss max_pss io_in io_out mean_load cpu_time\\fR, tab-separated; MiB,\n"
                  "two decimals, \\fB\\-\\fR for a figure not measured, \\fBNA\\fR for all of them when the file has "
                  "no\n"
                  "tracked tree); \\fBnextflow\\fR: a Nextflow trace, its header line and one row (\\fBname status\n"
                  "exit start complete duration realtime %cpu peak_rss peak_vmem rchar wchar read_bytes\n"
                  "write_bytes\\fR in Nextflow's words: \\fB107.4 MB\\fR, \\fB1m 5s\\fR, \\fB99.8%\\fR; \\fB\\-\\fR "
                  "where\n"
                  "unknown; \\fBrchar\\fR and \\fBwchar\\fR are not measured). A recorded file knows no command or\n"
                  "exit status: those are \\fB\\-\\fR. Each figure and unit is in docs/workflows.md."},
             {0}}},
    {.flag = "memory-unit",
     .commands = CLI_CMD_SUMMARY,
     .opt = CLI_O_MEMORY_UNIT,
     .arg = "UNIT",
     .type = CLI_T_MEM_UNIT,
     .what = "a unit (bytes, kilobytes, megabytes, gigabytes, terabytes)",
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_SUMMARY,
              .help = "bytes, kilobytes, megabytes, gigabytes, terabytes (powers of 1000)",
              .man = "\\fBbytes\\fR, \\fBkilobytes\\fR, \\fBmegabytes\\fR, \\fBgigabytes\\fR or \\fBterabytes\\fR "
                     "(powers of\n"
                     "1000, gpu_tracker's names). Without it, text picks readable units and JSON uses MiB (its\n"
                     "\\fBgpu_tracker\\fR member gigabytes)."},
             {0}}},
    {.flag = "time-unit",
     .commands = CLI_CMD_SUMMARY,
     .opt = CLI_O_TIME_UNIT,
     .arg = "UNIT",
     .type = CLI_T_TIME_UNIT,
     .what = "a unit (seconds, minutes, hours, days)",
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_SUMMARY,
                                    .help = "seconds, minutes, hours, days\n"
                                            "(without them text picks readable units and JSON uses MiB and seconds;\n"
                                            "its gpu_tracker member gigabytes and hours, as gpu_tracker)",
                                    .man = "\\fBseconds\\fR, \\fBminutes\\fR, \\fBhours\\fR or \\fBdays\\fR. Without "
                                           "it, JSON uses seconds (its\n"
                                           "\\fBgpu_tracker\\fR member hours)."},
                                   {0}}},
    {.flag = "output",
     .short_flag = 'o',
     .commands = CLI_CMD_REPORT,
     .opt = CLI_O_OUTPUT,
     .arg = "OUT.html",
     .type = CLI_T_FILE,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_REPORT,
              .help = "the file to write (required; \"-\" is stdout); a FIFO's reader is\n"
                      "waited for TRACKER_FINISH_TIMEOUT seconds (default 10), then given\n"
                      "the page for as long again",
              .man =
                  "The file to write (required; \\fB\\-\\fR is standard output). Created with mode 0666 less the\n"
                  "umask. A FIFO's reader is waited for at most \\fBTRACKER_FINISH_TIMEOUT\\fR seconds (default 10),\n"
                  "and given the page for at most as long again; past either the page is not (all) written: exit\n"
                  "status 1."},
             {0}}},
    {.flag = "instance",
     .commands = CLI_CMD_RECOMMEND | CLI_CMD_REPORT,
     .opt = CLI_O_INSTANCE,
     .arg = "VENDOR:TYPE",
     .type = CLI_T_INSTANCE,
     .what = "a server as VENDOR:TYPE (e.g. aws:t3.medium)",
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "the server the runs ran on (e.g. aws:t3.medium): its price, the run's\n"
                      "cost there and the saving on the cheapest server (with --job, by\n"
                      "default the server where the job's newest run ran, if known)",
              .man =
                  "The server the runs ran on (e.g. \\fBaws:t3.medium\\fR): its price, the run's cost there and the\n"
                  "saving on the cheapest server. With \\fB\\-\\-job\\fR and without it: the server and region where\n"
                  "the job's newest run ran, as cloud discovery found it, when known."},
             {.commands = CLI_CMD_REPORT,
              .help = "the server the runs ran on (e.g. aws:m5.large): its price, the run's\n"
                      "cost there and the saving on the cheapest server",
              .man = "The server the runs ran on (e.g. \\fBaws:m5.large\\fR): its price, the run's cost there and the\n"
                     "saving on the cheapest server."},
             {0}}},
    {.flag = "job",
     .commands = CLI_CMD_RECOMMEND | CLI_CMD_HISTORY,
     .opt = CLI_O_JOB,
     .arg = "NAME",
     .type = CLI_T_TEXT,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "use the last runs of NAME in the run history instead of files",
              .man = "Use the last runs of \\fINAME\\fR in the run history instead of files."},
             {.commands = CLI_CMD_HISTORY, .help = "only the runs of this job", .man = "Only the runs of this job."},
             {0}}},
    {.flag = "last",
     .commands = CLI_CMD_RECOMMEND | CLI_CMD_HISTORY,
     .opt = CLI_O_LAST,
     .arg = "N",
     .type = CLI_T_COUNT,
     .min = 1,
     .max = INT_MAX,
     .def = 5, /* recommend's; history's: all */
     .what = "a whole number of runs from 1",
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_RECOMMEND,
              .help = "how many of its last successful, OOM-killed or timed-out runs (default 5)",
              .man =
                  "How many of the job's last successful, OOM-killed or timed-out runs (default 5). Only with \\fB\\-\\-job\\fR."},
             {.commands = CLI_CMD_HISTORY, .help = "only the newest N runs", .man = "Only the newest \\fIN\\fR runs."},
             {0}}},
    {.flag = "user",
     .commands = CLI_CMD_HISTORY,
     .opt = CLI_O_USER,
     .arg = "NAME",
     .type = CLI_T_TEXT,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_HISTORY,
                                    .help = "only the runs of this user (login name)",
                                    .man = "Only the runs this user ran (the login name of the run's real uid)."},
                                   {0}}},
    {.flag = "host",
     .commands = CLI_CMD_HISTORY,
     .opt = CLI_O_HOST,
     .arg = "NAME",
     .type = CLI_T_TEXT,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_HISTORY,
                                    .help = "only the runs on this host (its host name, or its node's name in a job)",
                                    .man = "Only the runs on this host: its host name, or the node's name the run had "
                                           "(\\fBSLURMD_NODENAME\\fR,\n\\fB\\-\\-node\\fR, else the short host name)."},
                                   {0}}},
    {.flag = "since",
     .commands = CLI_CMD_HISTORY,
     .opt = CLI_O_SINCE,
     .arg = "WHEN",
     .type = CLI_T_WHEN,
     .what = "an ISO 8601 date or time (2026-11-29, 2026-11-29T07:30:00Z) or an age (90s, 30m, 12h, 7d, 2w)",
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_HISTORY,
                                    .help = "only the runs started at or after WHEN: an ISO 8601 date or time\n"
                                            "(2026-11-29, 2026-11-29T07:30:00Z; UTC without a zone) or an age:\n"
                                            "90s, 30m, 12h, 7d, 2w",
                                    .man = "Only the runs started at or after \\fIWHEN\\fR: an ISO 8601 date or date "
                                           "and time\n(\\fB2026\\-11\\-29\\fR, \\fB2026\\-11\\-29T07:30:00Z\\fR, "
                                           "\\fB2026\\-11\\-29 07:30+01:00\\fR; UTC without a zone, as the\n"
                                           "table shows), or an age back from now: a number and \\fBs\\fR, \\fBm\\fR, "
                                           "\\fBh\\fR, \\fBd\\fR or \\fBw\\fR\n(\\fB12h\\fR, \\fB7d\\fR)."},
                                   {0}}},
    {.flag = "export",
     .commands = CLI_CMD_HISTORY,
     .opt = CLI_O_EXPORT,
     .arg = "FILE",
     .type = CLI_T_FILE,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_HISTORY,
                                    .help = "write every run to FILE (\"-\": stdout) as JSON lines, oldest first,\n"
                                            "every column by name with its run_uuid, instead of listing",
                                    .man = "Write every run of the history to \\fIFILE\\fR (\\fB\\-\\fR: standard "
                                           "output) as JSON lines, oldest first: one run a\nline, every column under "
                                           "its name as stored, with its \\fBrun_uuid\\fR (a run recorded before\n"
                                           "0.21's schema 12 gets one made of its start, pid and host, the same each "
                                           "time). Instead of the\nlist; not with the filters."},
                                   {0}}},
    {.flag = "import",
     .commands = CLI_CMD_HISTORY,
     .opt = CLI_O_IMPORT,
     .arg = "FILE",
     .type = CLI_T_FILE,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_HISTORY,
                                    .help = "add the runs of FILE (--export's lines; \"-\": stdin) to the history,\n"
                                            "each once: a run whose run_uuid is there is skipped",
                                    .man = "Add the runs of \\fIFILE\\fR (\\fB\\-\\-export\\fR's JSON lines; "
                                           "\\fB\\-\\fR: standard input) to the history (made\nwhen missing), each "
                                           "once: a run whose \\fBrun_uuid\\fR the history holds is skipped. Prints "
                                           "how\nmany were added and skipped. All or nothing: a line that is no run "
                                           "is exit status 2 naming it,\nwith nothing imported."},
                                   {0}}},
    {.flag = "any-command",
     .commands = CLI_CMD_RECOMMEND,
     .opt = CLI_O_ANY_COMMAND,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub = (const cli_sub_text[]){{.commands = CLI_CMD_RECOMMEND,
                                    .help = "with --job: use the job's runs whatever their command line (by\n"
                                            "default those whose command differs from the newest run's are left out)",
                                    .man = "With \\fB\\-\\-job\\fR: use the job's runs whatever their command line. "
                                           "By default the runs whose\ncommand line differs from the newest run's are "
                                           "left out (said on standard error and in\n\\fBbased_on\\fR)."},
                                   {0}}},
    {.flag = "list",
     .commands = CLI_CMD_UPLOAD,
     .opt = CLI_O_LIST,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_UPLOAD,
              .help = "list the runs left (batches, rows, end, whose credentials), send nothing",
              .man = "List the runs left, one a line: key, run id (or \\(lqnot registered\\(rq), batches, rows,\n"
                     "missing batches, end, whether the API took its finish, and whose it is (these credentials,\n"
                     "another token or API URL, held by a live tracker or an upload, a record that cannot be read);\n"
                     "send nothing. Needs no token."},
             {0}}},
    {.flag = "verbose",
     .short_flag = 'v',
     .commands = CLI_CMD_PHASE,
     .opt = CLI_O_VERBOSE,
     .layer_off = NO,
     .set_off = NO,
     .merged_off = NO,
     .sub =
         (const cli_sub_text[]){
             {.commands = CLI_CMD_PHASE,
              .help = "say on stderr why a mark could not be sent",
              .man = "Say on standard error why a mark could not be sent (silent by default: the job's standard\n"
                     "error is the user's)."},
             {0}}},
    /* read from the environment only (cli_setting_getenv, cli_setting_env_number): the
     * library's seams and bounds and the streaming's (options.c), the OTLP exporter's (export.c) */
    {ENV_ONLY("TRACKER_PROC_ROOT", CLI_T_FILE)},
    {ENV_ONLY("TRACKER_SYS_ROOT", CLI_T_FILE)},
    {ENV_ONLY("TRACKER_NVML_LIBRARY", CLI_T_FILE)},
    {ENV_ONLY("TRACKER_CLOUD_METADATA_URL", CLI_T_TEXT)},
    {ENV_ONLY("TRACKER_CLOUD_DISCOVERY", CLI_T_TEXT)},
    {ENV_ONLY("TRACKER_KEEPER_URL", CLI_T_TEXT)},
    {ENV_ONLY("TRACKER_PSS_MAX_AGE", CLI_T_SECS), .max = AGE_MAX, .def = 30},
    {ENV_ONLY("TRACKER_WALK_MAX_AGE", CLI_T_SECS), .max = AGE_MAX, .def = 60},
    {ENV_ONLY("TRACKER_FINISH_TIMEOUT", CLI_T_ABOVE), .unit = "seconds", .max = 3600, .def = 10},
    /* with SENTINEL_API_TOKEN only */
    {ENV_ONLY("SENTINEL_API_URL", CLI_T_TEXT), .what = "an http:// or https:// URL"},
    {ENV_ONLY("TRACKER_UPLOAD_INTERVAL", CLI_T_SECS), .min = INTERVAL_MIN, .max = INTERVAL_MAX, .def = 60},
    {ENV_ONLY("AWS_ENDPOINT_URL_S3", CLI_T_TEXT), .what = "an http:// or https:// URL"},
    {ENV_ONLY("AWS_REGION", CLI_T_TEXT)},
    /* OTLP's (with --otlp or an endpoint variable); the signal's own variable wins */
    {ENV_ONLY("OTEL_EXPORTER_OTLP_ENDPOINT", CLI_T_TEXT), .env_over = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
     .what = "an http:// or https:// URL"},
    {ENV_ONLY("OTEL_EXPORTER_OTLP_HEADERS", CLI_T_TEXT), .env_over = "OTEL_EXPORTER_OTLP_METRICS_HEADERS"},
    {ENV_ONLY("OTEL_EXPORTER_OTLP_COMPRESSION", CLI_T_TEXT), .env_over = "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
     .what = "gzip or none"},
    {ENV_ONLY("OTEL_EXPORTER_OTLP_TIMEOUT", CLI_T_MS), .env_over = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", .min = 1,
     .max = 3600e3, .def = 10e3},
    {ENV_ONLY("OTEL_EXPORTER_OTLP_PROTOCOL", CLI_T_TEXT), .env_over = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
     .what = "http/json or http/protobuf"},
    {ENV_ONLY("OTEL_METRIC_EXPORT_INTERVAL", CLI_T_MS), .min = INTERVAL_MIN * 1000, .max = INTERVAL_MAX * 1000,
     .def = OTLP_INTERVAL_DEF * 1000},
    {ENV_ONLY("OTEL_RESOURCE_ATTRIBUTES", CLI_T_TEXT)},
    {ENV_ONLY("OTEL_SERVICE_NAME", CLI_T_TEXT)},
};
const size_t cli_nsettings = sizeof cli_settings / sizeof cli_settings[0];
