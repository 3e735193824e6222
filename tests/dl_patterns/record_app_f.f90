! The recorder under a Fortran program (tests/integration/test_record.py compiles it with
! mpif90, twice: with "use mpi", and with "use mpi_f08" where -DF08 is given). Four
! collectives of Fortran types with known sizes, roots and ops, each result checked.
#ifdef F08
#define USE_MPI use mpi_f08
#define IERR
#define REQUEST type(MPI_Request)
#else
#define USE_MPI use mpi
#define IERR , ierr
#define REQUEST integer
#endif
program record_app_f
  USE_MPI
  implicit none
  integer :: ierr, rank, nranks, wrong
  REQUEST :: req
  double precision :: d(4), dsum(4)
  integer :: i(10)
  real :: r(6), rmax(6)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks IERR)
  wrong = 0
  d = 1.0d0
  call MPI_Allreduce(d, dsum, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
  if (any(dsum /= nranks)) wrong = wrong + 1
  i = rank
  call MPI_Bcast(i, 10, MPI_INTEGER, 1, MPI_COMM_WORLD IERR)
  if (any(i /= 1)) wrong = wrong + 1
  r = rank
  call MPI_Iallreduce(r, rmax, 6, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  if (any(rmax /= nranks - 1)) wrong = wrong + 1
  call MPI_Barrier(MPI_COMM_WORLD IERR)
  if (rank == 0) print '(a,i0,a,i0,a)', 'record_app_f: ', nranks, ' ranks, ', wrong, &
    ' wrong results'
  call MPI_Finalize(ierr)
  if (wrong /= 0) stop 1
end program
