/* The implementation in a C translation unit, linked with C++ code. */
#define ECS_IMPLEMENTATION
#include "../../ecs.h"
