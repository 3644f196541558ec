"""graphleaks.models.dp_sgd: the DP-SGD plan, its Poisson sampler and the DP-SGD trainer."""

from graphleaks.models.dp_sgd import DPSGDPlan, PoissonBatchSampler, train_dp_sgd


def test_poisson_sampler_runs_the_plan():
    import torch

    plan = DPSGDPlan(num_samples=13, batch_size=5, epochs=2)
    assert (plan.rate, plan.steps_per_epoch, plan.steps) == (5 / 13, 3, 6)
    sampler = PoissonBatchSampler(13, plan.rate, plan.steps,
                                  torch.Generator().manual_seed(0))
    batches = list(sampler)
    assert len(batches) == sampler.draws == 6 == len(sampler)
    assert all(b.numel() == 0 or int(b.max()) < 13 for b in batches)


def test_empty_poisson_batches_are_noised_steps_not_skipped():
    """With B = 1 about a third of the batches are empty; each is still one noised step."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    before = net.weight.detach().clone()
    x, y = torch.randn(13, 4), torch.randint(0, 3, (13,))
    plan = DPSGDPlan(num_samples=13, batch_size=1, epochs=2)
    ran = train_dp_sgd(net, x, y, torch.arange(13), plan=plan, lr=0.1,
                       noise_multiplier=1.0, max_grad_norm=1.0, seed=0)
    assert (ran.steps, ran.rate) == (26, 1 / 13)
    assert not torch.equal(before, net.weight.detach())
