/*
 * What a page of new journal costs this machine's kernel, against a page touched before
 * (report/latency.md, "2026-12-03: the page warmer's CPU is the host's first touch").
 *
 *   gcc -O2 -o /tmp/pf report/latency/pagefault-probe.c
 *   /tmp/pf 512 DIR/pf1 DIR/pf2 DIR/pf3 DIR/pf4; rm -f DIR/pf?     (DIR on the journal's file system)
 *
 * Prints process CPU per 4 KiB page for: first and second touch of anonymous memory; the first
 * write through a shared mapping of a sparse file (what the journal's writer does); memset of a
 * mapped page; pwrite of 64 KiB and of 1 KiB records into a new file; MADV_POPULATE_WRITE of a
 * sparse file's mapping (what the page warmer does). Run it twice in a row: the second run reuses
 * the memory the first one freed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double cpu(){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  size_t n=(size_t)atol(argv[1])<<20; long pages=n/4096;
  double c0,c1;
  // anon first touch
  char*p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  c0=cpu(); for(size_t i=0;i<n;i+=4096)p[i]=1; c1=cpu();
  printf("anon first touch: %.2f us/page\n",(c1-c0)*1e6/pages);
  c0=cpu(); for(size_t i=0;i<n;i+=4096)p[i]=2; c1=cpu();
  printf("anon second touch (mapped): %.3f us/page\n",(c1-c0)*1e6/pages);
  munmap(p,n);
  // file mmap shared, sparse
  int fd=open(argv[2],O_RDWR|O_CREAT|O_TRUNC,0644); ftruncate(fd,n);
  p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);
  c0=cpu(); for(size_t i=0;i<n;i+=4096)p[i]=1; c1=cpu();
  printf("file mmap write fault (sparse): %.2f us/page\n",(c1-c0)*1e6/pages);
  c0=cpu(); for(size_t i=0;i<n;i+=4096)memset(p+i,3,4096); c1=cpu();
  printf("file mmap memset mapped page: %.3f us/page\n",(c1-c0)*1e6/pages);
  munmap(p,n); close(fd);
  // pwrite to new file
  char buf[65536]; memset(buf,7,sizeof buf);
  fd=open(argv[3],O_RDWR|O_CREAT|O_TRUNC,0644);
  c0=cpu(); for(size_t off=0;off<n;off+=sizeof buf) pwrite(fd,buf,sizeof buf,off); c1=cpu();
  printf("pwrite 64K into new file: %.2f us/page\n",(c1-c0)*1e6/pages);
  close(fd);
  // pwrite small (1K) records
  fd=open(argv[4],O_RDWR|O_CREAT|O_TRUNC,0644);
  c0=cpu(); for(size_t off=0;off<n;off+=1024) pwrite(fd,buf,1024,off); c1=cpu();
  printf("pwrite 1K records into new file: %.2f us/page (%.2f us/write)\n",(c1-c0)*1e6/pages,(c1-c0)*1e6/(n/1024));
  close(fd);
  // madvise populate write on new sparse file mapping
  fd=open(argv[5],O_RDWR|O_CREAT|O_TRUNC,0644); ftruncate(fd,n);
  p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);
  c0=cpu(); int r=madvise(p,n,23/*MADV_POPULATE_WRITE*/); c1=cpu();
  printf("MADV_POPULATE_WRITE (r=%d): %.2f us/page\n",r,(c1-c0)*1e6/pages);
  c0=cpu(); for(size_t i=0;i<n;i+=4096)p[i]=1; c1=cpu();
  printf("  then write: %.3f us/page\n",(c1-c0)*1e6/pages);
  munmap(p,n); close(fd);
  return 0;
}
