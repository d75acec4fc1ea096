#pragma once
// ObserverSet: the observers attached to a system, seen as one. The detail
// of a run is the highest any observer asks for; with no observer it is
// RunsOnly and nothing is called.
#include "model/observer.hpp"

#include <algorithm>
#include <vector>

namespace ipusim::model::hardware {

class ObserverSet {
 public:
  void add(ExecutionObserver* o) { observers_.push_back(o); }
  bool empty() const { return observers_.empty(); }
  Detail detailFor(const RunEvent& run) const {
    Detail d = Detail::RunsOnly;
    for (auto* o : observers_) d = std::max(d, o->detailFor(run));
    return d;
  }
  template <class F> void each(F&& f) const {
    for (auto* o : observers_) f(*o);
  }

 private:
  std::vector<ExecutionObserver*> observers_;
};

}  // namespace ipusim::model::hardware
