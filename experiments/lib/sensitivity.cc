#include "experiments/lib/sensitivity.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>

namespace schedlab {

SensitivityFit fit_sensitivity(const std::vector<std::string>& parameters, const std::vector<std::vector<double>>& x,
                               const std::vector<std::optional<double>>& y) {
  SensitivityFit fit;
  const size_t k = parameters.size();
  std::vector<size_t> rows;
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] && std::isfinite(*y[i])) rows.push_back(i);
  fit.points = static_cast<int>(rows.size());
  if (k == 0) {
    fit.note = "no numeric swept parameter";
    return fit;
  }
  if (rows.size() < k + 2) {
    fit.note = fmt::format("{} point{} with a value for {} parameter{} (a fit needs {})", rows.size(),
                           rows.size() == 1 ? "" : "s", k, k == 1 ? "" : "s", k + 2);
    return fit;
  }
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd X(n, static_cast<Eigen::Index>(k + 1));
  Eigen::VectorXd Y(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    const size_t i = rows[static_cast<size_t>(r)];
    X(r, 0) = 1.0;
    for (size_t j = 0; j < k; ++j) X(r, static_cast<Eigen::Index>(j + 1)) = x[i][j];
    Y(r) = *y[i];
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(X);
  if (qr.rank() < static_cast<Eigen::Index>(k + 1)) {
    fit.note = "the swept values are collinear (every parameter needs at least two values that vary independently)";
    return fit;
  }
  // A metric that does not move at all has slope 0 exactly; the QR
  // solve would give rounding noise (-1e-11 for six equal values).
  const bool constant_y = (Y.array() == Y(0)).all();
  Eigen::VectorXd b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(k + 1));
  if (constant_y)
    b(0) = Y(0);
  else
    b = qr.solve(Y);
  fit.intercept = b(0);

  const double my = constant_y ? Y(0) : Y.mean();  // the mean of six 0.1s is not 0.1
  const double sst = (Y.array() - my).square().sum();
  const double sse = (Y - X * b).squaredNorm();
  if (sst > 0) fit.r2 = 1.0 - sse / sst;
  const double sdy = std::sqrt(sst / static_cast<double>(n - 1));
  for (size_t j = 0; j < k; ++j) {
    const Eigen::VectorXd col = X.col(static_cast<Eigen::Index>(j + 1));
    const double mx = col.mean();
    const double sdx = std::sqrt((col.array() - mx).square().sum() / static_cast<double>(n - 1));
    ParameterFit p;
    p.parameter = parameters[j];
    p.slope = b(static_cast<Eigen::Index>(j + 1));
    // A % change per 1% change reads only on a ratio scale: no swept
    // value negative, a positive mean (a nice sweep from -20 to 10,
    // centred at -5, would give the slope's opposite sign).
    const bool ratio_scale = (col.array() >= 0.0).all() && mx > 0;
    if (ratio_scale && my != 0) p.elasticity = p.slope * mx / my;
    if (sdy > 0) p.standardized = p.slope * sdx / sdy;
    fit.parameters.push_back(std::move(p));
  }
  return fit;
}

}  // namespace schedlab
