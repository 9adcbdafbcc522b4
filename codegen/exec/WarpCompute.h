// Private to codegen/exec: the results of the value-exchanging warp collectives, computed from a slot's inputs
// for the lanes in Participants. One definition serves the fiber rendezvous (WarpCollectives.cpp) and the
// dispatcher of region-split block functions (RegionRendezvous.cpp), so both modes answer alike.
#pragma once

#include "Runtime.h"

namespace ptxforge::codegen::exec {

void computeShfl(CollectiveSlot &S);  ///< In {value, b, c, mode: 0 up 1 down 2 bfly 3 idx}; Out {value, in range}
void computeVote(CollectiveSlot &S);  ///< In {pred, mode: 0 all 1 any 2 uni 3 ballot}; Out {result}
void computeMatch(CollectiveSlot &S); ///< In {value, all}; Out {mask, pred}
void computeRedux(CollectiveSlot &S); ///< In {value, op (see ptxrt_redux)}; Out {result}

/// The dispatcher of region-split block functions with collective cuts (RegionRendezvous.cpp).
void registerRegionHelpers(HelperTable &T);

} // namespace ptxforge::codegen::exec
