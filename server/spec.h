/* spec.h — JSON <-> spec_t: every field of API.md's experiment spec checked (type, range,
 * enum, "2^k" sizes), unknown fields refused with the field named, defaults filled. */
#ifndef STREAMLAB_SPEC_H
#define STREAMLAB_SPEC_H

#include <jansson.h>

#include "../gpu/backend.h"

/* Parse and validate; on error err->field names the field (422) and nothing is filled. */
int spec_from_json(json_t *obj, spec_t *out, sl_error_t *err);
/* Does the parser accept this spec? (an imported bundle's stored specs) 0 or the error. */
int spec_check_json(json_t *obj, sl_error_t *err);
/* The full spec after defaults, as stored and returned. */
json_t *spec_to_json(const spec_t *spec);
/* Is name a field of the spec? (sweep axes) */
bool spec_is_field(const char *name);

#endif
