/*
 * Test-only stand-in for bcryptprimitives.dll under Wine 8.0, which lacks ProcessPrng
 * (real Windows 10 and 11 have it; Rust's std draws its random numbers from it). It answers
 * ProcessPrng with RtlGenRandom. Never shipped: scripts/wine/run.sh builds it into a folder of
 * its own and loads it only inside Wine (WINEDLLOVERRIDES).
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom, advapi32 */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
