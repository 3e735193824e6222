// The count matrix of the v forms: the compact form whose rows are alike (what the drop-in
// builds for each MPI_Allgatherv) reads exactly as the full matrix with the same rows.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "core/vcounts.hpp"

namespace cb {
namespace {

TEST(CountMatrix, RowsAlikeReadsAsTheFullMatrix) {
  for (const std::vector<size_t>& row :
       {std::vector<size_t>{7}, std::vector<size_t>{3, 0, 5}, std::vector<size_t>{0, 0, 0, 9},
        std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    const int n = static_cast<int>(row.size());
    std::vector<size_t> full;
    for (int from = 0; from < n; ++from) full.insert(full.end(), row.begin(), row.end());
    const CountMatrix whole(full, n);
    const CountMatrix alike = CountMatrix::rows_alike(row);
    ASSERT_EQ(alike.nranks(), n);
    EXPECT_EQ(alike.mean(), whole.mean());
    EXPECT_EQ(alike.max_send_total(), whole.max_send_total());
    EXPECT_EQ(alike.max_recv_total(), whole.max_recv_total());
    EXPECT_EQ(alike.blocks_total(), whole.blocks_total());
    EXPECT_EQ(alike.max_block(), whole.max_block());
    EXPECT_DOUBLE_EQ(alike.imbalance(), whole.imbalance());
    EXPECT_DOUBLE_EQ(alike.block_imbalance(), whole.block_imbalance());
    for (int a = 0; a < n; ++a) {
      EXPECT_EQ(alike.send_total(a), whole.send_total(a)) << a;
      EXPECT_EQ(alike.recv_total(a), whole.recv_total(a)) << a;
      EXPECT_EQ(alike.block(a), whole.block(a)) << a;
      EXPECT_EQ(alike.block_offset(a), whole.block_offset(a)) << a;
      for (int b = 0; b < n; ++b) {
        EXPECT_EQ(alike.count(a, b), whole.count(a, b)) << a << " " << b;
        EXPECT_EQ(alike.send_offset(a, b), whole.send_offset(a, b)) << a << " " << b;
        EXPECT_EQ(alike.recv_offset(a, b), whole.recv_offset(a, b)) << a << " " << b;
      }
    }
    const CountMatrix t = alike.transposed(), tw = whole.transposed();
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) EXPECT_EQ(t.recv_offset(a, b), tw.recv_offset(a, b));
  }
  EXPECT_THROW(CountMatrix::rows_alike({}), std::invalid_argument);
}

}  // namespace
}  // namespace cb
