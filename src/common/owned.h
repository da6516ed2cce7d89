/* owned.h - one call that frees a destructor's independent owned blocks, shared by the library
 * and the tool (header-only, no state): rt_free_all(x->a, x->b, x->c) in place of a run of
 * free(x->a); free(x->b); ... lines. */
#ifndef RT_OWNED_H
#define RT_OWNED_H

#include <stddef.h>
#include <stdlib.h>

/* free(3)s each of the n pointers p holds (NULL ones are no-ops, as for free). */
static inline void rt_free_each(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}

/* Frees each argument (object pointers; a const one is cast to (void *) where it is owned).
 * The order among them is left open: use it for blocks none of which the others' freeing reads,
 * and free the struct that holds them after it, on its own. The arguments are evaluated once
 * (the sizeof operand is not evaluated). */
#define rt_free_all(...)                                                                                               \
    rt_free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
