// Folding any rank count onto the largest power of two below it (MPICH's approach for
// recursive doubling and halving): of the first 2 * rem ranks, each even rank hands its
// data to the odd rank above it and sits out; the others take new ranks 0 .. pof2-1.
#pragma once

namespace cb::engine {

struct PowerOfTwoFold {
  int pof2 = 1;      // largest power of two <= size
  int rem = 0;       // size - pof2
  int newrank = -1;  // this rank in the power-of-two group; -1 if it sits out

  PowerOfTwoFold(int rank, int size) {
    while (pof2 * 2 <= size) pof2 *= 2;
    rem = size - pof2;
    if (rank < 2 * rem)
      newrank = rank % 2 ? rank / 2 : -1;
    else
      newrank = rank - rem;
  }
  bool sits_out() const { return newrank < 0; }
  bool takes_partner(int rank) const { return rank < 2 * rem && rank % 2 == 1; }
  int real_rank(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};

inline bool is_power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

}  // namespace cb::engine
