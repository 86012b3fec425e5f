/* commands tests: to be written. */
#include "test.h"

void suite_commands(void) {
}
