// The size of the buffers the start allocates by the hundred (the reader's payload blocks, the
// gold's chunks, file reads). Under glibc's first mmap threshold (128 KB): a buffer of 4 MB is
// mmapped, and freeing one (here in another thread, after a transfer) raises the threshold to its
// size, after which every buffer below it comes from malloc's arenas and stays in the process's RSS
// once freed. With all three under 128 KB (they were 4 MB, 1 MB and 1 MB) the start's peak RSS was
// 449-462 MB against 476-487 (bench/startup-bench side by side, README issue 26).
export const SMALL_BUFFER_BYTES = 96 << 10;
