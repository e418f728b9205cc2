// Sensitivity of a sweep's metrics to its numeric parameters: an ordinary
// least-squares fit (Eigen, column-pivoting Householder QR) of each
// metric's per-point mean against the swept values,
//
//     y = b0 + sum_k b_k x_k,
//
// reported per parameter as the slope b_k, the elasticity at the means
// e_k = b_k * mean(x_k) / mean(y) (the % change of y per 1% change of x_k
// around the sweep's centre; n/a when either mean is 0) and the
// standardized coefficient b_k * sd(x_k) / sd(y) (change of y in its
// standard deviations per standard deviation of x_k, which stays defined
// for parameters centred on 0 such as nice), with R^2 for the whole fit.
// A fit needs at least (parameters + 2) points with a value, so one degree
// of freedom is left to judge it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace schedlab {

struct ParameterFit {
  std::string parameter;
  double slope = 0;
  std::optional<double> elasticity;
  std::optional<double> standardized;
};

struct SensitivityFit {
  int points = 0;                 // points used
  std::optional<double> r2;       // nullopt when y is constant (nothing to explain)
  double intercept = 0;
  std::vector<ParameterFit> parameters;
  std::string note;               // why there is no fit ("3 points for 2 parameters"), else empty
  bool ok() const { return note.empty(); }
};

// x[i][k]: parameter k at point i; y[i]: the metric at point i (nullopt
// points are left out).
SensitivityFit fit_sensitivity(const std::vector<std::string>& parameters, const std::vector<std::vector<double>>& x,
                               const std::vector<std::optional<double>>& y);

}  // namespace schedlab
