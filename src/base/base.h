// base: the layer every other layer stands on. Status and codes, logging,
// configuration (environment + acl.json), dtype facts, fp16/bf16.
// Depends on nothing of OpenACL's; knows no acl* types.
#pragma once

#include "base/codes.h"
#include "base/config.h"
#include "base/dtype.h"
#include "base/fp16.h"
#include "base/log.h"
#include "base/status.h"
