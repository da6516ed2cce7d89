/* reader_test.h - for the unit tests only: the reader's read size and longest line, made
 * small so that lines split across read(2) calls and buffer growth are exercised on small
 * inputs. Not public; not thread-safe (tests set it before opening, single-threaded). */
#ifndef RT_READER_TEST_H
#define RT_READER_TEST_H

#include <stddef.h>

/* Readers opened from now on ask read(2) for at most chunk bytes and end the read at a line
 * longer than max_line (RT_ERR_PARSE); 0, 0 restores the defaults (1 MiB, 16 MiB). */
void rt_reader_test_limits(size_t chunk, size_t max_line);

#endif
