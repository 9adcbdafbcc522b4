// Processes sharing one compute cache: eight compute_cache_worker processes start at once on an empty cache
// directory and each load, run and check the same three modules three times. Every result must be right, no
// process may ever read a partial or corrupt entry, and the directory ends with exactly the nine entries (each
// module loads lazily: its shared part, and its kernel's quick and optimized code).
#include "ComputeCacheTestSupport.h"

#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

using namespace ptxforge::testing;

TEST_CASE("eight processes loading the same modules into one empty cache all get correct results") {
  TempDir Dir;
  std::string Cache = Dir.path() + "/cache";
  constexpr int Processes = 8;
  std::vector<pid_t> Pids;
  for (int I = 0; I < Processes; ++I) {
    std::string Out = Dir.path() + "/worker" + std::to_string(I) + ".txt";
    posix_spawn_file_actions_t Actions;
    posix_spawn_file_actions_init(&Actions);
    posix_spawn_file_actions_addopen(&Actions, 1, Out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&Actions, 2, (Out + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string Worker = PTXFORGE_CACHE_WORKER, Rounds = "3";
    char *Argv[] = {Worker.data(), Cache.data(), Rounds.data(), nullptr};
    pid_t Pid = 0;
    REQUIRE(posix_spawn(&Pid, Worker.c_str(), &Actions, nullptr, Argv, environ) == 0);
    posix_spawn_file_actions_destroy(&Actions);
    Pids.push_back(Pid);
  }
  uint64_t Hits = 0;
  for (int I = 0; I < Processes; ++I) {
    int Status = 0;
    REQUIRE(waitpid(Pids[I], &Status, 0) == Pids[I]);
    std::string Out = readFile(Dir.path() + "/worker" + std::to_string(I) + ".txt");
    INFO("worker " << I << ": " << Out << readFile(Dir.path() + "/worker" + std::to_string(I) + ".txt.err"));
    CHECK(WIFEXITED(Status));
    CHECK(WEXITSTATUS(Status) == 0);
    CHECK(Out.find("corrupt=0") != std::string::npos);
    unsigned long long H = 0, M = 0, S = 0, C = 0;
    REQUIRE(std::sscanf(Out.c_str(), "hits=%llu misses=%llu stores=%llu corrupt=%llu", &H, &M, &S, &C) == 4);
    // Nine loads per process, two lookups each (the shared part, the optimized kernel), and a third (the quick
    // code) where the optimized code is not stored yet; at most the first load of each module can miss.
    CHECK(H + M >= 18);
    CHECK(H + M <= 27);
    CHECK(H >= 12);
    Hits += H;
  }
  MESSAGE(Processes << " processes, " << Hits << " cache hits");
  std::vector<std::string> Left = listNames(Cache);
  Left.erase(std::remove(Left.begin(), Left.end(), "lock"), Left.end());
  CHECK(Left.size() == 9); // the nine entries, no temporary file left behind
  for (const std::string &Name : Left)
    CHECK(Name.size() == 32 + 6);
}
