// The whole public API of jx.
#pragma once
#include "jx/array.h"
#include "jx/dtype.h"
#include "jx/error.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "jx/shape.h"
#include "jx/transforms.h"
#include "jx/tree.h"
#include "jx/vmap.h"
