/* The implementation in a C++ translation unit (the stb habit), linked with
   the C unit tests and with C++ code. */
#define ECS_IMPLEMENTATION
#include "../../ecs.h"
