// Names of the observer vocabulary (model/observer.hpp), as the profile's
// slice categories spell them.
#include "model/observer.hpp"

namespace ipusim::model {

const char* toString(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::Compute: return "compute";
    case PhaseKind::Exchange: return "exchange";
    case PhaseKind::Sync: return "sync";
    case PhaseKind::StreamCopy: return "stream_copy";
    case PhaseKind::IpuLinkCopy: return "ipu_link_copy";
    case PhaseKind::StreamingMemory: return "streaming_memory";
  }
  return "unknown";
}

const char* toString(StreamCopyPhase phase) {
  switch (phase) {
    case StreamCopyPhase::Begin: return "begin";
    case StreamCopyPhase::HostService: return "host_service";
    case StreamCopyPhase::Mid: return "mid";
    case StreamCopyPhase::End: return "end";
  }
  return "unknown";
}

}  // namespace ipusim::model
