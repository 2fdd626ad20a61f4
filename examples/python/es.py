#!/usr/bin/python3
# A DEAP program not written for R3Q: the evolution strategy of DEAP's own
# examples (examples/es/fctmin.py: self-adaptive step sizes, ESBlend
# crossover, log-normal mutation, on benchmarks.sphere), run as a
# (mu + lambda) ES with algorithms.eaMuPlusLambda.  DEAP is LGPL-3.0-or-
# later; this example follows its code and is under the same licence.
#
# R3Q changes two lines (marked "# R3Q"): the toolbox's map becomes one
# R3Q batch per generation of the named kind that evaluates (kinds= says
# toolbox.evaluate is what it runs: another function mapped is refused),
# evaluated by workers that run
#
#	exec deap-sphere = persistent /usr/bin/python3 -m r3q.serve --pickle es:toolbox.evaluate
#	env deap-sphere = PYTHONPATH=/path/to/examples/python
#
# in workerd.conf.  The workers import this file to get DEAP's creator
# classes (a pickled Individual names them); main() runs only here.
# --pickle unpickles what clients send, which runs whatever code a pickle
# names: every client with a certificate can run its own code on the
# workers, as their user.  (The client unpickles the workers' results
# against an allowlist: r3q.trust_results() is the only way around it.)
#
#	./es.py --seed 64                   # DEAP's builtin map
#	./es.py --seed 64 --r3q deap-sphere # the same logbook, on the cluster
import argparse
import array
import random

import numpy

from deap import algorithms, base, benchmarks, creator, tools

import r3q                                                          # R3Q

IND_SIZE = 30
MIN_VALUE = 4
MAX_VALUE = 5
MIN_STRATEGY = 0.5
MAX_STRATEGY = 3

creator.create("FitnessMin", base.Fitness, weights=(-1.0,))
creator.create("Individual", array.array, typecode="d",
               fitness=creator.FitnessMin, strategy=None)
creator.create("Strategy", array.array, typecode="d")


# Individual generator
def generateES(icls, scls, size, imin, imax, smin, smax):
    ind = icls(random.uniform(imin, imax) for _ in range(size))
    ind.strategy = scls(random.uniform(smin, smax) for _ in range(size))
    return ind


def checkStrategy(minstrategy):
    def decorator(func):
        def wrapper(*args, **kargs):
            children = func(*args, **kargs)
            for child in children:
                for i, s in enumerate(child.strategy):
                    if s < minstrategy:
                        child.strategy[i] = minstrategy
            return children
        return wrapper
    return decorator


toolbox = base.Toolbox()
toolbox.register("individual", generateES, creator.Individual,
                 creator.Strategy, IND_SIZE, MIN_VALUE, MAX_VALUE,
                 MIN_STRATEGY, MAX_STRATEGY)
toolbox.register("population", tools.initRepeat, list, toolbox.individual)
toolbox.register("mate", tools.cxESBlend, alpha=0.1)
toolbox.register("mutate", tools.mutESLogNormal, c=1.0, indpb=0.03)
toolbox.register("select", tools.selTournament, tournsize=3)
toolbox.register("evaluate", benchmarks.sphere)

toolbox.decorate("mate", checkStrategy(MIN_STRATEGY))
toolbox.decorate("mutate", checkStrategy(MIN_STRATEGY))


def main(seed=None, ngen=500, verbose=True):
    random.seed(seed)
    MU, LAMBDA = 10, 100
    pop = toolbox.population(n=MU)
    hof = tools.HallOfFame(1)
    stats = tools.Statistics(lambda ind: ind.fitness.values)
    stats.register("avg", numpy.mean)
    stats.register("std", numpy.std)
    stats.register("min", numpy.min)
    stats.register("max", numpy.max)

    pop, logbook = algorithms.eaMuPlusLambda(
        pop, toolbox, mu=MU, lambda_=LAMBDA, cxpb=0.6, mutpb=0.3,
        ngen=ngen, stats=stats, halloffame=hof, verbose=verbose)

    return pop, logbook, hof


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="DEAP's ES on the sphere, "
                                "(mu + lambda), optionally on R3Q")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--ngen", type=int, default=500)
    p.add_argument("--r3q", metavar="KIND",
                   help="evaluate on the R3Q cluster (R3Q_* environment) "
                   "with this kind")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args()
    if a.r3q:
        toolbox.register("map", r3q.Client().executor(                # R3Q
            codec="pickle", kinds={toolbox.evaluate: a.r3q}).map)
    pop, logbook, hof = main(a.seed, a.ngen, not a.quiet)
    for record in logbook:
        print(repr(record))
    print("best", repr(list(hof[0])), repr(hof[0].fitness.values))
