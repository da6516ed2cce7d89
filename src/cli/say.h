/* say.h - where the tool's lines go while a part of the tool holds stderr: the output queue
 * when the samples go to stderr too (outq.c), the status line (status.c). Each installs its
 * taker while it holds stderr and removes it after; cli_say (say.c) hands each line to the
 * takers installed, in their order here, and writes it to stderr itself when none took it. */
#ifndef CLI_SAY_H
#define CLI_SAY_H

#include <stdbool.h>
#include <stddef.h>

/* Takes one of the tool's lines (n bytes, its newline included). Returns true when taken,
 * false when the caller is to write it to stderr itself. Called from any thread. */
typedef bool (*cli_say_taker)(const char *line, size_t n);

/* The takers' places, in the order cli_say asks them. */
typedef enum cli_say_slot {
    CLI_SAY_OUTQ,   /* the run's sample output when it shares stderr (outq.c) */
    CLI_SAY_STATUS, /* the status line on the terminal (status.c) */
    CLI_SAY_SLOTS
} cli_say_slot;

/* Installs taker at slot (NULL removes it). Thread-safe; a line said meanwhile goes to the
 * taker before or after. */
void cli_say_install(cli_say_slot slot, cli_say_taker taker);

#endif
